/**
 * The package.json a tarball ships, made from the one the repository keeps: what `pnpm pack`
 * does by itself (pnpm 12, `pnpm/crates/exportable-manifest/src/create.rs` and
 * `replace.rs`), done here for `npm pack`, which does neither step (npm 11 copies package.json
 * as it is on disk after `prepack`; `publishConfig` is npm configuration to it, never
 * manifest fields).
 *
 * 1. `workspace:` specifiers become the version of the workspace package they name.
 * 2. The manifest fields of `publishConfig` (same list as pnpm) replace the top-level ones:
 *    that is how `exports` loses the `source` condition, which only the workspace's own
 *    development uses (`mocha --conditions=source`, `.mocharc.json`).
 * 3. Publish lifecycle scripts are dropped (they name files that are not in the tarball).
 */

/** A package.json, parsed. */
export type Manifest = Record<string, unknown>;

/**
 * `publishConfig` keys that replace the manifest field of the same name; any other key
 * (`access`, `registry`, `tag`, ...) stays in `publishConfig` as npm configuration.
 * Source: `PUBLISH_CONFIG_WHITELIST` of pnpm 12 (`pnpm/crates/exportable-manifest/src/create.rs`).
 */
export const PUBLISH_CONFIG_FIELDS: readonly string[] = [
  'name', 'bin', 'engines', 'type', 'imports', 'main', 'module', 'typings', 'types', 'exports',
  'browser', 'esnext', 'es2015', 'unpkg', 'umd:main', 'os', 'cpu', 'libc', 'typesVersions',
];

/** Scripts pnpm 12 drops from a packed manifest (`PREPUBLISH_SCRIPTS` in the same file). */
export const PUBLISH_LIFECYCLE_SCRIPTS: readonly string[] = ['prepublishOnly', 'prepack', 'prepare', 'postpack', 'publish', 'postpublish'];

/** The dependency fields whose `workspace:` specifiers are replaced. */
export const DEPENDENCY_FIELDS: readonly string[] = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];

/** The package condition only the workspace's development resolves (never published). */
export const DEVELOPMENT_CONDITION = 'source';

/** A manifest that cannot be turned into a publishable one; `message` says which field and why. */
export class PublishManifestError extends Error {
  override readonly name = 'PublishManifestError';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The specifier a published manifest records for `spec`: `workspace:*` → `1.2.3`,
 * `workspace:^` → `^1.2.3`, `workspace:~` → `~1.2.3` (the version `versionOf(name)` gives),
 * `workspace:<range>` → `<range>`; any other specifier is returned as it is.
 *
 * @throws {@link PublishManifestError} for the `workspace:` forms pnpm also accepts but this
 *   repository does not use (an alias `workspace:other@*`, a path `workspace:../x`): pack
 *   with `pnpm pack` then.
 */
export function publishedSpecifier(name: string, spec: string, versionOf: (name: string) => string): string {
  if (!spec.startsWith('workspace:')) return spec;
  const rest = spec.slice('workspace:'.length);
  if (rest === '*' || rest === '') return versionOf(name);
  if (rest === '^' || rest === '~') return `${rest}${versionOf(name)}`;
  if (rest.includes('@') || rest.startsWith('.') || rest.includes('/')) {
    throw new PublishManifestError(`${name}: "${spec}" (an alias or a path) is not rewritten here; use pnpm pack`);
  }
  return rest;
}

/**
 * The manifest a tarball ships for `manifest` (which is not changed).
 *
 * @param versionOf - version of a workspace package by name (its package.json `version`).
 * @throws {@link PublishManifestError} when a specifier cannot be rewritten, or when the
 *   result still holds a `workspace:` specifier or the `source` condition.
 */
export function publishManifest(manifest: Manifest, versionOf: (name: string) => string): Manifest {
  const out: Manifest = { ...manifest };
  delete out['packageManager'];
  delete out['pnpm'];
  if (isRecord(manifest['scripts'])) {
    out['scripts'] = Object.fromEntries(Object.entries(manifest['scripts']).filter(([name]) => !PUBLISH_LIFECYCLE_SCRIPTS.includes(name)));
  }
  for (const field of DEPENDENCY_FIELDS) {
    const deps = manifest[field];
    if (!isRecord(deps)) continue;
    out[field] = Object.fromEntries(Object.entries(deps).map(([name, spec]) => [name, typeof spec === 'string' ? publishedSpecifier(name, spec, versionOf) : spec]));
  }
  const publishConfig = manifest['publishConfig'];
  if (isRecord(publishConfig)) {
    const remaining: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(publishConfig)) {
      if (PUBLISH_CONFIG_FIELDS.includes(key)) out[key] = value;
      else remaining[key] = value;
    }
    if (Object.keys(remaining).length > 0) out['publishConfig'] = remaining;
    else delete out['publishConfig'];
  }
  const problems = publishProblems(out);
  if (problems.length > 0) throw new PublishManifestError(problems.join('; '));
  return out;
}

/** The conditions used anywhere in an `exports` (or `imports`) value. */
export function conditionsOf(exportsValue: unknown): Set<string> {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (isRecord(value)) {
      for (const [key, inner] of Object.entries(value)) {
        if (!key.startsWith('.') && !key.startsWith('#')) found.add(key);
        walk(inner);
      }
    }
  };
  walk(exportsValue);
  return found;
}

/** Every file path an `exports` value can resolve to (its string leaves). */
export function targetsOf(exportsValue: unknown): string[] {
  if (typeof exportsValue === 'string') return [exportsValue];
  if (Array.isArray(exportsValue)) return exportsValue.flatMap(targetsOf);
  if (isRecord(exportsValue)) return Object.values(exportsValue).flatMap(targetsOf);
  return [];
}

/**
 * What keeps a manifest from being published as it is: `workspace:` specifiers (npm
 * refuses them with EUNSUPPORTEDPROTOCOL) and the `source` condition in `exports` (it points
 * at .ts files, which Node refuses inside node_modules: ERR_UNKNOWN_FILE_EXTENSION).
 * Empty when there is nothing.
 */
export function publishProblems(manifest: Manifest): string[] {
  const problems: string[] = [];
  for (const field of DEPENDENCY_FIELDS) {
    const deps = manifest[field];
    if (!isRecord(deps)) continue;
    for (const [name, spec] of Object.entries(deps)) {
      if (typeof spec === 'string' && spec.startsWith('workspace:')) problems.push(`${field}.${name} is "${spec}"`);
    }
  }
  if (conditionsOf(manifest['exports']).has(DEVELOPMENT_CONDITION)) {
    problems.push(`exports use the "${DEVELOPMENT_CONDITION}" condition (give publishConfig.exports without it)`);
  }
  return problems;
}
