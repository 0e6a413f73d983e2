/**
 * One writing module per table, as docs/architecture.md's table says: no module's SQL (repositories,
 * tagged templates, `sql/*.sql` routines, Prisma delegate calls) inserts, updates, deletes or copies
 * into a table another module owns, and every read of another module's table in a module's own SQL
 * (a read model) is written down in that table.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../helpers/module-sources';
import { accessors, ownershipTable, tableUses, tablesByDelegate, type OwnershipRow } from '../helpers/table-access';

const rows = ownershipTable();
const ownerOf = new Map(rows.map((row) => [row.table, row.writer]));
const uses = accessors().flatMap(({ name, files }) => tableUses(files).map((use) => ({ ...use, module: name })));

/** The SQL of each module that writes a table the table says another module owns, as `file writes table (owner)`. */
const foreignWrites = (owners: Map<string, string>, found = uses) =>
  found
    .filter((use) => use.how === 'writes' && owners.get(use.table) !== use.module)
    .map((use) => `${repoPath(use.file)} writes ${use.table}, which ${owners.get(use.table) ?? 'no module'} owns`);

describe('table ownership', () => {
  it('names every table of prisma/schema.prisma once, with a module that exists as its writer', () => {
    const tables = [...new Set(tablesByDelegate().values())].sort();
    expect(rows.map((row) => row.table).sort()).toEqual(tables);
    const writers = new Set(accessors().map((accessor) => accessor.name));
    expect(rows.filter((row) => !writers.has(row.writer))).toEqual([]);
  });

  it("finds no module writing another module's table (change it through the owner's face)", () => {
    expect(foreignWrites(ownerOf)).toEqual([]);
  });

  it('finds a write of another module in SQL, in a routine and through Prisma', () => {
    const owners = new Map([
      ['order_items', 'orders'],
      ['stock_mutations', 'stock'],
      ['proxies', 'proxies'],
    ]);
    const found = [
      { file: '/r/src/modules/supply/supply.repository.ts', table: 'order_items', how: 'writes' as const },
      { file: '/r/src/modules/broadcasts/sql/queue.sql', table: 'stock_mutations', how: 'writes' as const },
      { file: '/r/src/modules/proxies/proxies.repository.ts', table: 'proxies', how: 'writes' as const },
    ].map((use, index) => ({ ...use, module: ['supply', 'broadcasts', 'proxies'][index]! }));
    expect(foreignWrites(owners, found)).toHaveLength(2);
    expect(foreignWrites(owners, found)[0]).toMatch(/supply\.repository\.ts writes order_items, which orders owns$/);
  });

  it.each([
    ['UPDATE order_items SET state = $1', 'writes'],
    ['INSERT INTO "stock_mutations" (id) VALUES ($1)', 'writes'],
    ['DELETE FROM proxies WHERE key = $1', 'writes'],
    ['COPY search_documents (id) FROM STDIN', 'writes'],
    ['SELECT 1 FROM orders o JOIN order_items i ON i.order_id = o.id', 'reads'],
  ])('reads %j as SQL that %s its tables', (sql, how) => {
    const dir = mkdtempSync(join(tmpdir(), 'table-access-'));
    const routine = join(dir, 'routine.sql');
    const repository = join(dir, 'repository.ts');
    writeFileSync(routine, `-- UPDATE tenants is only a comment\n${sql};\n`);
    writeFileSync(
      repository,
      `// DELETE FROM tenants in a comment\nexport const q = (db: any) => db.$queryRaw\`${sql}\`;\n`,
    );
    for (const file of [routine, repository]) {
      const found = tableUses([file]);
      expect(found.every((use) => use.how === how)).toBe(true);
      expect(found.length).toBeGreaterThan(0);
      expect(found.some((use) => use.table === 'tenants')).toBe(false);
    }
  });

  it('reads Prisma delegate calls as writes and reads of their tables', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'table-access-')), 'service.ts');
    writeFileSync(file, 'export const f = (db: any) => [db.orderItem.updateMany({}), db.product.findMany({})];\n');
    expect(tableUses([file]).map((use) => `${use.how} ${use.table}`)).toEqual(['writes order_items', 'reads products']);
  });

  it("lists every module that reads another module's table in its own SQL (a read model), and no other", () => {
    const documented = (row: OwnershipRow) => [...row.sqlReaders].sort();
    const actual = (table: string) =>
      [
        ...new Set(
          uses.filter((use) => use.table === table && use.module !== ownerOf.get(table)).map((use) => use.module),
        ),
      ].sort();
    const wrong = rows
      .filter((row) => JSON.stringify(documented(row)) !== JSON.stringify(actual(row.table)))
      .map(
        (row) =>
          `${row.table}: the table says ${documented(row).join(', ') || '–'}, the SQL ${actual(row.table).join(', ') || '–'}`,
      );
    expect(wrong).toEqual([]);
  });
});
