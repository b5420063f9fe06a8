import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

// Comments and docs cite the specification and the contract by file and section; a
// clone of the repository must hold what they cite (docs/), and the section must exist,
// so that a reader can follow every "Source:" line.
const ROOT = process.cwd();
const SCANNED = ['packages', 'examples', 'bench', 'tools', 'docs', 'README.md'];
const SKIP = new Set(['node_modules', 'dist', 'coverage', '.git']);
const CITATION = /(?:\.\.\/)*(?:[\w-]+\/)*([\w-]+\.md)(?: "([^"\n]+)")?/gu;
const DOCS = new Set(['CONTRACT.md', 'api-spec.md', 'ARCHITECTURE.md', 'NOTES-dependencies.md', 'decisions.md']);

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    SKIP.has(entry.name) ? [] : entry.isDirectory() ? filesUnder(join(path, entry.name)) : /\.(ts|md|yaml)$/u.test(entry.name) ? [join(path, entry.name)] : [],
  );
}

function headingsOf(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('#'))
    .map((line) => line.replace(/^#+\s*/u, '').trim());
}

/** A cited section matches a heading that starts with it; `...` stands for any text. */
function matches(section: string, heading: string): boolean {
  const pattern = section
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}`, 'iu').test(heading);
}

describe('documentation citations', function () {
  const files = SCANNED.flatMap((p) => filesUnder(join(ROOT, p)));

  it('cite the specification, contract and architecture inside docs/, never outside the repository', function () {
    const outside: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      if (/\.\.\/shared\b|\/work\/shared/u.test(text)) outside.push(relative(ROOT, file));
    }
    expect(outside).to.deep.equal([]);
    for (const doc of DOCS) expect(existsSync(join(ROOT, 'docs', doc)), `docs/${doc}`).to.equal(true);
  });

  it('name sections that exist in the cited document', function () {
    const headings = new Map([...DOCS].map((doc) => [doc, headingsOf(join(ROOT, 'docs', doc))]));
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(CITATION)) {
        const [, doc, section] = match;
        if (doc === undefined || section === undefined || !DOCS.has(doc)) continue;
        if (!(headings.get(doc) ?? []).some((h) => matches(section, h))) broken.push(`${relative(ROOT, file)}: ${doc} "${section}"`);
      }
    }
    expect([...new Set(broken)]).to.deep.equal([]);
  });
});
