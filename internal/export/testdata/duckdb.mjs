// Queries a Parquet file with DuckDB (@duckdb/node-api), an independent
// reader, and prints each query's rows as a JSON list of lists of row
// objects on stdout. In each query, FILE stands for the file.
//
// usage: node duckdb.mjs DUCKDB_NODE_API_ENTRY FILE QUERY...
import { pathToFileURL } from 'node:url'

const [entry, file, ...queries] = process.argv.slice(2)
const { DuckDBInstance } = await import(pathToFileURL(entry).href)
const db = await DuckDBInstance.create(':memory:')
const conn = await db.connect()
const quoted = "'" + file.replaceAll("'", "''") + "'"
const out = []
for (const q of queries) {
  const reader = await conn.runAndReadAll(q.replaceAll('FILE', quoted))
  out.push(reader.getRowObjectsJson())
}
process.stdout.write(JSON.stringify(out))
