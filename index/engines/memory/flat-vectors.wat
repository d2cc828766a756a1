;; The flat vectors' kernel (index/engines/memory/flat-vectors.ts, where each function is described): f32 dot products of a query
;; with every row (`dots`) or with listed rows (`dotsAt`), and the 16-bit screen (`screen16`). Assembled with wabt
;; (scripts/build-wasm.ts, `npm run build`) into flat-vectors.wasm beside the code that loads it (never committed).
(module
;; Imported and shared: a loaded engine image's vectors are one memory every thread's instance reads in place
;; (each thread's scratch is a region it grew the memory by); at most 2 GiB (the offsets are signed 32-bit in JS).
  (import "env" "memory" (memory 1 32768 shared))
  (func (export "dots") (param $q i32) (param $m i32) (param $n i32) (param $dim i32) (param $out i32)
    (local $d i32) (local $i i32) (local $row i32) (local $bytes i32) (local $main i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $main (i32.and (local.get $bytes) (i32.const -64)))
    (local.set $row (local.get $m))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $d) (local.get $n)))
        (local.set $a0 (v128.const f32x4 0 0 0 0))
        (local.set $a1 (v128.const f32x4 0 0 0 0))
        (local.set $a2 (v128.const f32x4 0 0 0 0))
        (local.set $a3 (v128.const f32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (block $maindone
          (loop $cols
            (br_if $maindone (i32.ge_u (local.get $i) (local.get $main)))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
              (v128.load (i32.add (local.get $row) (local.get $i)))
              (v128.load (i32.add (local.get $q) (local.get $i))))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul
              (v128.load offset=16 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=16 (i32.add (local.get $q) (local.get $i))))))
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul
              (v128.load offset=32 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=32 (i32.add (local.get $q) (local.get $i))))))
            (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul
              (v128.load offset=48 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=48 (i32.add (local.get $q) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 64)))
            (br $cols)))
        (block $taildone
          (loop $tail
            (br_if $taildone (i32.ge_u (local.get $i) (local.get $bytes)))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
              (v128.load (i32.add (local.get $row) (local.get $i)))
              (v128.load (i32.add (local.get $q) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $tail)))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $d) (i32.const 2)))
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
            (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $rows))))
  (func (export "dotsAt") (param $q i32) (param $m i32) (param $ids i32) (param $n i32) (param $dim i32) (param $out i32)
    (local $d i32) (local $i i32) (local $row i32) (local $bytes i32) (local $main i32) (local $id i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $main (i32.and (local.get $bytes) (i32.const -64)))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $d) (local.get $n)))
        (local.set $id (i32.load (i32.add (local.get $ids) (i32.shl (local.get $d) (i32.const 2)))))
        (local.set $row (i32.add (local.get $m) (i32.mul (local.get $id) (local.get $bytes))))
        (local.set $a0 (v128.const f32x4 0 0 0 0))
        (local.set $a1 (v128.const f32x4 0 0 0 0))
        (local.set $a2 (v128.const f32x4 0 0 0 0))
        (local.set $a3 (v128.const f32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (block $maindone
          (loop $cols
            (br_if $maindone (i32.ge_u (local.get $i) (local.get $main)))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
              (v128.load (i32.add (local.get $row) (local.get $i)))
              (v128.load (i32.add (local.get $q) (local.get $i))))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul
              (v128.load offset=16 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=16 (i32.add (local.get $q) (local.get $i))))))
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul
              (v128.load offset=32 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=32 (i32.add (local.get $q) (local.get $i))))))
            (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul
              (v128.load offset=48 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=48 (i32.add (local.get $q) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 64)))
            (br $cols)))
        (block $taildone
          (loop $tail
            (br_if $taildone (i32.ge_u (local.get $i) (local.get $bytes)))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
              (v128.load (i32.add (local.get $row) (local.get $i)))
              (v128.load (i32.add (local.get $q) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $tail)))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $id) (i32.const 2)))
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
            (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $rows))))
  (func (export "screen16") (param $q i32) (param $m i32) (param $n i32) (param $dim i32) (param $a i32)
      (param $r i32) (param $bq f64) (param $t f64) (param $ids i32) (param $abs i32) (result i32)
    (local $d i32) (local $i i32) (local $row i32) (local $bytes i32) (local $main i32) (local $c i32) (local $s i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 1)))
    (local.set $main (i32.and (local.get $bytes) (i32.const -64)))
    (local.set $row (local.get $m))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $d) (local.get $n)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $a2 (v128.const i32x4 0 0 0 0))
        (local.set $a3 (v128.const i32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (block $maindone
          (loop $cols
            (br_if $maindone (i32.ge_u (local.get $i) (local.get $main)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.dot_i16x8_s
              (v128.load (i32.add (local.get $row) (local.get $i)))
              (v128.load (i32.add (local.get $q) (local.get $i))))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.dot_i16x8_s
              (v128.load offset=16 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=16 (i32.add (local.get $q) (local.get $i))))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.dot_i16x8_s
              (v128.load offset=32 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=32 (i32.add (local.get $q) (local.get $i))))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.dot_i16x8_s
              (v128.load offset=48 (i32.add (local.get $row) (local.get $i)))
              (v128.load offset=48 (i32.add (local.get $q) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 64)))
            (br $cols)))
        (block $taildone
          (loop $tail
            (br_if $taildone (i32.ge_u (local.get $i) (local.get $bytes)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.dot_i16x8_s
              (v128.load (i32.add (local.get $row) (local.get $i)))
              (v128.load (i32.add (local.get $q) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $tail)))
        (local.set $a0 (i32x4.add (i32x4.add (local.get $a0) (local.get $a1)) (i32x4.add (local.get $a2) (local.get $a3))))
        (local.set $s
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $a0)) (i32x4.extract_lane 1 (local.get $a0)))
            (i32.add (i32x4.extract_lane 2 (local.get $a0)) (i32x4.extract_lane 3 (local.get $a0)))))
        (if (i32.eqz (f64.lt
              (f64.add
                (f64.add (f64.convert_i32_s (local.get $s)) (f64.load (i32.add (local.get $a) (i32.shl (local.get $d) (i32.const 3)))))
                (local.get $bq))
              (f64.mul (local.get $t) (f64.load (i32.add (local.get $r) (i32.shl (local.get $d) (i32.const 3)))))))
          (then
            (i32.store (i32.add (local.get $ids) (i32.shl (local.get $c) (i32.const 2))) (local.get $d))
            (i32.store (i32.add (local.get $abs) (i32.shl (local.get $c) (i32.const 2))) (local.get $s))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $rows)))
    (local.get $c)))
