import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The service's name and version, as package.json states them (the contract's version follows it). */
export const packageInfo = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as {
  name: string;
  version: string;
};
