// Reads every row of a Parquet file with @dsnp/parquetjs, an independent
// reader that refuses DATA_PAGE_V2 pages' DELTA_LENGTH_BYTE_ARRAY, and
// prints {"num_rows", "rows"} as JSON on stdout.
//
// usage: node parquetjs.mjs PARQUETJS_ENTRY FILE (@dsnp/parquetjs/dist/parquet.js)
import { pathToFileURL } from 'node:url'

const [entry, file] = process.argv.slice(2)
const parquet = (await import(pathToFileURL(entry).href)).default
const reader = await parquet.ParquetReader.openFile(file)
const cursor = reader.getCursor()
const rows = []
for (let row = await cursor.next(); row; row = await cursor.next()) rows.push(row)
const out = { num_rows: Number(reader.getRowCount()), rows }
await reader.close()
process.stdout.write(JSON.stringify(out, (k, v) => typeof v === 'bigint' ? Number(v) : v))
