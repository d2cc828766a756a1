/** RFC 4180 CSV, streamed (the open-data files run to hundreds of thousands of rows). */
/**
 * Streams RFC 4180 CSV records (quoted fields, doubled quotes, CR/LF line ends, newlines inside quotes).
 * The first record is the header.
 */
export async function* readCsv(stream: AsyncIterable<string | Buffer>): AsyncGenerator<string[]> {
  let field = '';
  let record: string[] = [];
  let inQuotes = false;
  let quotePending = false; // saw a quote inside a quoted field: either an escaped quote or the closing one
  let any = false;
  for await (const chunk of stream) {
    const s = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    for (let i = 0; i < s.length; i++) {
      const c = s[i]!;
      if (inQuotes) {
        if (quotePending) {
          quotePending = false;
          if (c === '"') {
            field += '"';
            continue;
          }
          inQuotes = false;
          // fall through: c is handled as an unquoted character below
        } else if (c === '"') {
          quotePending = true;
          continue;
        } else {
          field += c;
          continue;
        }
      }
      if (c === '"' && field === '') {
        inQuotes = true;
        any = true;
      } else if (c === ',') {
        record.push(field);
        field = '';
        any = true;
      } else if (c === '\n') {
        record.push(field);
        yield record;
        record = [];
        field = '';
        any = false;
      } else if (c === '\r') {
        // CRLF: the LF ends the record.
      } else {
        field += c;
        any = true;
      }
    }
  }
  if (any || field !== '' || record.length > 0) {
    record.push(field);
    yield record;
  }
}
