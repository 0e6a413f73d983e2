import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A full garbage collection, without starting node with --expose-gc (which npm start does not). */
export const collectGarbage = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();
