/**
 * Which tables the SQL of each module (and of the kernel) writes and reads: the statements in its
 * repositories, its tagged templates and raw strings, its `sql/*.sql` routines, and its Prisma
 * delegate calls (`db.order.update(...)`). Table and delegate names come from prisma/schema.prisma;
 * and the owners of the tables from the table of docs/architecture.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ARCHITECTURE_DOC,
  filesUnder,
  KERNEL_DIR,
  MODULES_DIR,
  moduleNames,
  prismaCallsOf,
  REPO_ROOT,
  sqlTextsOf,
} from './module-sources';

/** The tables of prisma/schema.prisma, by the name of their Prisma delegate (`orderItem` → `order_items`). */
export function tablesByDelegate(schema = readFileSync(join(REPO_ROOT, 'prisma/schema.prisma'), 'utf8')) {
  const tables = new Map<string, string>();
  for (const [, model, body] of schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const table = /@@map\("([^"]+)"\)/.exec(body!)?.[1] ?? model!;
    tables.set(model![0]!.toLowerCase() + model!.slice(1), table);
  }
  return tables;
}

const WRITE =
  /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|MERGE\s+INTO|TRUNCATE(?:\s+TABLE)?|COPY)\s+(?:ONLY\s+)?"?(\w+)"?/gi;
// A DELETE's FROM names the table it writes, not one it reads.
const READ = /(?<!\bDELETE\s+)\b(?:FROM|JOIN)\s+(?:ONLY\s+)?"?(\w+)"?/gi;
const PRISMA_WRITES = new Set([
  'create',
  'createMany',
  'createManyAndReturn',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'upsert',
  'delete',
  'deleteMany',
]);
const PRISMA_READS = new Set([
  'findFirst',
  'findFirstOrThrow',
  'findUnique',
  'findUniqueOrThrow',
  'findMany',
  'count',
  'aggregate',
  'groupBy',
]);

/** One table a file's SQL names. */
export interface TableUse {
  file: string;
  table: string;
  how: 'writes' | 'reads';
}

/** What the SQL and Prisma calls of these files write and read, of the known tables. */
export function tableUses(files: string[], delegates = tablesByDelegate()): TableUse[] {
  const tables = new Set(delegates.values());
  const uses: TableUse[] = [];
  for (const file of files) {
    const add = (table: string, how: TableUse['how']) => {
      if (tables.has(table) && !uses.some((u) => u.file === file && u.table === table && u.how === how))
        uses.push({ file, table, how });
    };
    for (const text of sqlTextsOf(file)) {
      for (const [, table] of text.matchAll(WRITE)) add(table!, 'writes');
      for (const [, table] of text.matchAll(READ)) add(table!, 'reads');
    }
    for (const { delegate, method } of prismaCallsOf(file)) {
      const table = delegates.get(delegate);
      if (table && PRISMA_WRITES.has(method)) add(table, 'writes');
      else if (table && PRISMA_READS.has(method)) add(table, 'reads');
    }
  }
  return uses;
}

/** The owners of table access: every module folder, and the kernel. */
export function accessors(): { name: string; files: string[] }[] {
  return [
    { name: 'kernel', files: filesUnder(KERNEL_DIR, ['.ts', '.sql']) },
    ...moduleNames().map((name) => ({ name, files: filesUnder(join(MODULES_DIR, name), ['.ts', '.sql']) })),
  ];
}

/** One row of the ownership table: the table, its writer, and who reads it in SQL of their own. */
export interface OwnershipRow {
  table: string;
  writer: string;
  sqlReaders: string[];
}

/**
 * The table under "## Who writes each table" of docs/architecture.md: `| table | writing module |
 * read in its own SQL by | read through the face by |`, names in backticks or plain.
 */
export function ownershipTable(doc = readFileSync(ARCHITECTURE_DOC, 'utf8')): OwnershipRow[] {
  const section = /## Who writes each table\n([\s\S]*?)(?=\n## |$)/.exec(doc)?.[1];
  if (!section) throw new Error('docs/architecture.md has no section "## Who writes each table"');
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  const names = (cell: string) =>
    cell === '' || cell === '–' ? [] : cell.split(',').map((name) => name.trim().replace(/`/g, '').split(' ')[0]!);
  return rows.slice(2).map(([table, writer, sqlReaders]) => ({
    table: table!.replace(/`/g, ''),
    writer: writer!.replace(/`/g, ''),
    sqlReaders: names(sqlReaders ?? ''),
  }));
}
