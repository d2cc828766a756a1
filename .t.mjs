const t = performance.now(); await import(process.argv[2]); console.log(process.argv[2].slice(0,30), (performance.now()-t).toFixed(0));
