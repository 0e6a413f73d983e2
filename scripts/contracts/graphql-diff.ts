import { CriticalityLevel, diff } from '@graphql-inspector/core';
import { buildSchema } from 'graphql';
import type { Change, Criticality } from './changes';

const LEVELS: Record<CriticalityLevel, Criticality> = {
  [CriticalityLevel.Breaking]: 'BREAKING',
  [CriticalityLevel.Dangerous]: 'DANGEROUS',
  [CriticalityLevel.NonBreaking]: 'SAFE',
};

/** The changes between two versions of the SDL (each all of the schema's files, concatenated), by graphql-inspector. */
export async function graphqlChanges(oldSdl: string, newSdl: string): Promise<Change[]> {
  if (oldSdl.trim() === '') return [];
  const changes = await diff(buildSchema(oldSdl), buildSchema(newSdl));
  return changes.map((change) => ({
    criticality: LEVELS[change.criticality.level],
    location: change.path ?? 'schema',
    message: change.message,
  }));
}
