/**
 * Parquet files as LeRobot's readers (pyarrow, Hugging Face datasets, pandas) expect them, written
 * through hyparquet-writer. Columns are typed explicitly — a guessed type would make a float
 * column of whole numbers INT32 — and lists use the standard three-level LIST layout
 * (`<name>.list.element`), which is what pyarrow writes and reads as list<…>.
 */
import { writeFile } from 'node:fs/promises';
import { ByteWriter, parquetWrite } from 'hyparquet-writer';

/** hyparquet-writer's own schema element type (it bundles its own hyparquet). */
type SchemaElement = NonNullable<Parameters<typeof parquetWrite>[0]['schema']>[number];

/** float32: LeRobot's dtype for state, action and timestamp. */
export type ColumnType = 'int64' | 'float32' | 'float64' | 'string';

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
  /** 0: one value per row; 1: a list per row; 3: a list of lists of lists (image stats, shape (3,1,1)). */
  readonly listDepth?: 0 | 1 | 3;
  readonly data: readonly unknown[];
}

const LEAF: Record<ColumnType, Omit<SchemaElement, 'name'>> = {
  int64: { type: 'INT64' },
  float32: { type: 'FLOAT' },
  float64: { type: 'DOUBLE' },
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
};

function schemaOf(c: Column): SchemaElement[] {
  const depth = c.listDepth ?? 0;
  const out: SchemaElement[] = [];
  let name = c.name;
  for (let d = 0; d < depth; d++) {
    out.push({ name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 });
    out.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 });
    name = 'element';
  }
  out.push({ name, repetition_type: 'OPTIONAL', ...LEAF[c.type] });
  return out;
}

function leafValues(c: Column): unknown[] {
  if (c.type !== 'int64') return c.data as unknown[];
  const big = (v: unknown): unknown => (Array.isArray(v) ? v.map(big) : typeof v === 'number' ? BigInt(v) : v);
  return c.data.map(big);
}

export interface ParquetFile {
  readonly columns: readonly Column[];
  /** Key–value metadata, e.g. pandas' index description. */
  readonly kvMetadata?: readonly { key: string; value: string }[];
}

/** The file's bytes (written whole: a dataset file is complete or absent, never half a footer). */
export function parquetBytes(file: ParquetFile): Uint8Array {
  const rows = file.columns[0]?.data.length ?? 0;
  for (const c of file.columns)
    if (c.data.length !== rows) throw new Error(`parquet column ${c.name} has ${c.data.length} rows, not ${rows}`);
  const writer = new ByteWriter();
  void parquetWrite({
    writer,
    columnData: file.columns.map((c) => ({ name: c.name, data: leafValues(c) as never })),
    schema: [{ name: 'root', num_children: file.columns.length }, ...file.columns.flatMap(schemaOf)],
    kvMetadata: file.kvMetadata?.map((m) => ({ ...m })),
    createdBy: 'tandem record export (hyparquet-writer)',
  });
  return writer.getBytes();
}

export async function writeParquetFile(path: string, file: ParquetFile): Promise<void> {
  await writeFile(path, parquetBytes(file), { flag: 'wx' });
}
