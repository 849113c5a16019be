import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
const f = '/tmp/locktest.db';
if (process.argv[2] === 'holder') {
  const a = new Database(f); a.pragma('journal_mode=WAL'); a.exec('create table if not exists t(x)'); a.prepare('insert into t values (1)').run();
  const r = new Database(f, { readonly: true }); r.prepare('select count(*) from t').get();
  console.log('ready'); setTimeout(() => {}, 1e6);
} else {
  const child = spawn(process.execPath, ['lock-tmp.mjs', 'holder'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((r) => child.stdout.once('data', r));
  for (const mode of ['exclusive-begin', 'journal-delete', 'exclusive-read']) {
    const b = new Database(f, { fileMustExist: true, timeout: 200 });
    try {
      b.pragma('locking_mode = EXCLUSIVE');
      if (mode === 'exclusive-begin') b.exec('begin exclusive');
      if (mode === 'journal-delete') console.log(b.pragma('journal_mode = DELETE'));
      if (mode === 'exclusive-read') b.prepare('select count(*) from t').get();
      console.log(mode, 'with holder: GOT lock');
    } catch (e) { console.log(mode, 'with holder: refused', e.code, e.message); }
    b.close();
  }
  child.kill('SIGKILL'); await new Promise((r) => child.on('exit', r));
  for (const mode of ['exclusive-begin']) {
    const b = new Database(f, { fileMustExist: true, timeout: 200 });
    try { b.pragma('locking_mode = EXCLUSIVE'); b.exec('begin exclusive'); console.log(mode, 'after kill: GOT lock', b.prepare('select count(*) c from t').get()); b.exec('rollback'); }
    catch (e) { console.log(mode, 'after kill: refused', e.code, e.message); }
    // another connection now?
    const c = new Database(f, { fileMustExist: true, timeout: 200 });
    try { c.prepare('select count(*) from t').get(); console.log('other conn while exclusive held: read ok'); } catch (e) { console.log('other conn while exclusive held: refused', e.code); }
    c.close(); b.close();
  }
}
