/** What `npm start` says once it listens: where the service is, and where the master key is kept. */
export interface BannerFacts {
  baseUrl: string;
  /** The file holding the master key, or undefined when it comes from MASTER_KEY. */
  masterKeyFile: string | undefined;
  /** Whether this start generated the key. */
  masterKeyGenerated: boolean;
}

/** The banner's lines. The key itself is never part of it: the file (or MASTER_KEY) holds it. */
export function bannerLines({ baseUrl, masterKeyFile, masterKeyGenerated }: BannerFacts): string[] {
  const masterKey =
    masterKeyFile === undefined
      ? 'from MASTER_KEY'
      : `${masterKeyGenerated ? 'generated now, ' : ''}in ${masterKeyFile} (cat ${masterKeyFile})`;
  return [
    `Commerce Platform API listening on ${baseUrl}`,
    `  API reference  ${baseUrl}/docs`,
    `  GraphQL        ${baseUrl}/graphql (GraphiQL in a browser)`,
    `  health         ${baseUrl}/healthz`,
    `  master key     ${masterKey}`,
    `  first API key  npm run admin -- quickstart   (a tenant, a key with every scope, curl lines to paste)`,
    `  demo data      npm run seed   (a shop of 1,000 products and its search page at ${baseUrl}/demo/demo-shop)`,
  ];
}
