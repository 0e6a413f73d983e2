import { writeFileSync } from 'node:fs';
import { OPENAPI_FILE, renderOpenApiYaml } from '../src/kernel/rest/openapi-yaml';
import { restOperations } from '../src/app';

writeFileSync(OPENAPI_FILE, renderOpenApiYaml(restOperations));
console.log(`wrote ${OPENAPI_FILE}`);
