/**
 * Which Typesense servers the adapter speaks to, and how the protocol differs between them. The
 * version is what `GET /debug` reports (`"30.0"`, `"29.0"`, `"30.1.rc3"`; `"0.25.2"` before v26).
 */

/** Oldest and newest major version supported; docs/guides/search.md states the same range. */
export const SUPPORTED_MAJOR_VERSIONS = { oldest: 29, newest: 30 } as const;

/** What the adapter does differently per server version. */
export interface TypesenseProtocol {
  version: string;
  /** v30 keeps synonyms in shared synonym sets; before, each collection had its own. */
  synonyms: 'synonym-sets' | 'collection-synonyms';
  /** v30 can count groups exactly (up to `group_max_candidates`); v29 estimates `found` of a grouped search. */
  exactGroupCount: boolean;
}

export class UnsupportedTypesenseVersion extends Error {
  constructor(readonly version: string) {
    const { oldest, newest } = SUPPORTED_MAJOR_VERSIONS;
    super(
      `Typesense server version ${version} is not supported: this service speaks Typesense ${oldest}.x to ` +
        `${newest}.x. Upgrade the server, or leave TYPESENSE_URL unset to use the embedded engine.`,
    );
    this.name = 'UnsupportedTypesenseVersion';
  }
}

/** The major version of a Typesense version string, or null when it does not name a release. */
export function majorVersion(version: string): number | null {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim());
  if (!match) return null;
  // Releases before v26 were numbered 0.x: 0.25.2 is the 25th major release, older than 29.
  return match[1] === '0' ? Number(match[2]) : Number(match[1]);
}

/** The protocol for a server version; throws UnsupportedTypesenseVersion outside the supported range. */
export function protocolFor(version: string): TypesenseProtocol {
  const major = majorVersion(version);
  const { oldest, newest } = SUPPORTED_MAJOR_VERSIONS;
  if (major === null || major < oldest || major > newest) throw new UnsupportedTypesenseVersion(version);
  return {
    version,
    synonyms: major >= 30 ? 'synonym-sets' : 'collection-synonyms',
    exactGroupCount: major >= 30,
  };
}
