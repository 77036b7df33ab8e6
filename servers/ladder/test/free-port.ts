import { createServer } from 'node:net';

/** A port nothing listens on: bound once by the system's choice on 127.0.0.1, then closed again. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
