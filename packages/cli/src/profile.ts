/**
 * The profile file `svc login` writes and every command reads last (after flags and the
 * environment): the base URL and one credential, JSON, readable by its owner only.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The environment variable that names the profile file instead of the default place.
 * Not `SVC_CONFIG`: the API server and its admin CLI read their YAML configuration from
 * that one, and `svc login` would overwrite a server's configuration file with a profile.
 */
export const PROFILE_ENV = 'SVC_CLI_CONFIG';

/** What the profile holds (snake_case, like the API). */
export interface Profile {
  /** `{base_url}` of the API. */
  readonly base_url?: string;
  /** An API key (`svc-…`). */
  readonly api_key?: string;
  /** An OAuth access token (`svcpt_…`). */
  readonly access_token?: string;
}

/** The profile could not be read (not JSON, not an object) or written. */
export class ProfileError extends Error {
  override readonly name = 'ProfileError';
}

/**
 * Where the profile is: `$SVC_CLI_CONFIG`, else `$XDG_CONFIG_HOME/svc/config.json`, else
 * `~/.config/svc/config.json` (XDG Base Directory Specification's default).
 */
export function profilePath(env: NodeJS.ProcessEnv): string {
  const explicit = env[PROFILE_ENV];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CONFIG_HOME'];
  const base = xdg !== undefined && xdg.startsWith('/') ? xdg : join(homedir(), '.config');
  return join(base, 'svc', 'config.json');
}

/**
 * Reads the profile at `path`; an empty one when there is no file.
 *
 * @throws {@link ProfileError} when the file is not a JSON object of strings.
 */
export async function readProfile(path: string): Promise<Profile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ProfileError(`cannot read the profile ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProfileError(`the profile ${path} is not JSON: run svc login again`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ProfileError(`the profile ${path} is not a JSON object: run svc login again`);
  const record = value as Record<string, unknown>;
  const field = (key: keyof Profile): string | undefined => {
    const v = record[key];
    if (v !== undefined && typeof v !== 'string') throw new ProfileError(`the profile ${path}: ${key} must be a string`);
    return v;
  };
  const baseUrl = field('base_url');
  const apiKey = field('api_key');
  const accessToken = field('access_token');
  return { ...(baseUrl === undefined ? {} : { base_url: baseUrl }), ...(apiKey === undefined ? {} : { api_key: apiKey }), ...(accessToken === undefined ? {} : { access_token: accessToken }) };
}

/**
 * Writes `profile` to `path`: the directory is made with mode 0700, the file with mode 0600
 * (a secret is in it), written beside and renamed over the old one so that a reader never
 * sees half a file. An existing file's mode is set to 0600 too.
 */
export async function writeProfile(path: string, profile: Profile): Promise<void> {
  const dir = dirname(path);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const next = `${path}.${process.pid}.tmp`;
    await writeFile(next, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600, flag: 'w' });
    await chmod(next, 0o600); // the umask may have taken bits away; never added any
    await rename(next, path);
  } catch (error) {
    throw new ProfileError(`cannot write the profile ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** Removes the profile at `path`; true when there was one. */
export async function removeProfile(path: string): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new ProfileError(`cannot remove the profile ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
