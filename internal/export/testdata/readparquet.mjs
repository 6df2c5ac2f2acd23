// Reads a Parquet file with hyparquet, an independent JavaScript reader,
// and prints {"num_rows", "row_groups", "columns", "rows", "chunks"} as
// JSON on stdout; chunks lists each column chunk's encodings and page
// types (from its encoding_stats), as the file's metadata declares them.
//
// usage: node readparquet.mjs HYPARQUET_NODE_ENTRY FILE (hyparquet/src/node.js)
import { pathToFileURL } from 'node:url'

const [entry, file] = process.argv.slice(2)
const hp = await import(pathToFileURL(entry).href)
const buf = await hp.asyncBufferFromFile(file)
const metadata = await hp.parquetMetadataAsync(buf)
const columns = metadata.schema.slice(1).map(s => s.name)
const rows = await hp.parquetReadObjects({ file: buf, metadata })
const chunks = metadata.row_groups.flatMap(g => g.columns.map(c => ({
  column: c.meta_data.path_in_schema.join('.'),
  encodings: c.meta_data.encodings,
  page_types: (c.meta_data.encoding_stats || []).map(s => s.page_type),
})))
const out = { num_rows: Number(metadata.num_rows), row_groups: metadata.row_groups.length, columns, rows, chunks }
process.stdout.write(JSON.stringify(out, (k, v) => typeof v === 'bigint' ? Number(v) : v))
