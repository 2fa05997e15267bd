// Runs one SQL query in an in-memory DuckDB (@duckdb/node-api, as the
// lockfile pins it) and prints its rows as one JSON array, big integers as
// strings: how the Go tests read a dataset the way a DuckDB user would.
import { DuckDBInstance } from '@duckdb/node-api';

const sql = process.argv[2];
if (!sql) {
  console.error('usage: duckdb-query.mjs SQL');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:');
const con = await instance.connect();
const reader = await con.runAndReadAll(sql);
process.stdout.write(JSON.stringify(reader.getRowObjectsJson()) + '\n');
