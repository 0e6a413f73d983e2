/**
 * nginx with proxy_cache in front of the same origin, as the yardstick for the edge's cached
 * hits: one worker process, the page kept by proxy_cache, started from a configuration written to
 * a temporary directory. Only when an `nginx` binary is on the PATH (Debian: nginx-light).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningServer } from '../../lib/stack';
import type { Teardown } from '../../lib/teardown';

/** The nginx executable on the PATH (sbin directories included, where Debian puts it), or null. */
export function findNginx(path = process.env.PATH ?? ''): string | null {
  for (const dir of [...path.split(delimiter), '/usr/sbin', '/usr/local/sbin']) {
    if (dir === '') continue;
    const candidate = join(dir, 'nginx');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return null;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// As root, nginx would run its worker as nobody, who cannot write to the private directory.
const configuration = (dir: string, port: number, origin: URL, originPath: string) => `
daemon off;
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  proxy_cache_path ${dir}/cache levels=1:2 keys_zone=edge:10m max_size=256m inactive=60m use_temp_path=off;
  upstream origin { server ${origin.host}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://origin${originPath};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache edge;
      proxy_cache_valid 200 1h;
      add_header X-Cache $upstream_cache_status;
    }
  }
}
`;

/** Starts nginx proxying every path to `originPath` + path of `origin`, cached; stopped by the teardown. */
export async function startNginxCache(
  nginx: string,
  origin: URL,
  originPath: string,
  teardown: Teardown,
): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  teardown.add('remove the nginx directory', () => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  writeFileSync(join(dir, 'nginx.conf'), configuration(dir, port, origin, originPath));
  const child = spawn(nginx, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  teardown.add('stop nginx', async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGQUIT');
    await exited;
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr.trim()}`);
    try {
      await fetch(url);
      return { origin: url };
    } catch {
      await sleep(50);
    }
  }
  throw new Error(`nginx did not start listening: ${stderr.trim()}`);
}
