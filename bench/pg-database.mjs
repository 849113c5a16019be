// A fresh PostgreSQL database for one bench run, next to the server's others, dropped afterwards.
import pg from 'pg';

/** Creates database `name` on the server `adminUrl` names; resolves to its URL and the function that drops it. */
export async function freshPgDatabase(adminUrl, name) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
