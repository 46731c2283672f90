// A whole WinoGAViL game in Debian's chromium, driven by playwright-core: register, qualify,
// create a round, see the rival's picks, three players solve it (one on a phone-sized screen,
// one with the keyboard only), scores and leaderboard update, the export contains it, and a
// reported association is reviewed by an admin.
//
//   node game.test.mjs <winokit binary> <shared dir>
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [winokit, shared] = process.argv.slice(2);
if (!winokit) throw new Error('usage: node game.test.mjs <winokit> <shared dir>');
const chromePath = process.env.CHROMIUM || '/usr/bin/chromium';
const work = mkdtempSync(join(tmpdir(), 'winokit-browser-'));
const model = join(shared || '', 'golden/clip/models/tiny-quickgelu-hf');

let passed = 0;
const t0 = Date.now();
function ok(name) { passed++; console.log('ok   - ' + name + ' (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)'); }

// An image pool from the synthetic dataset, and a one-instance qualification test.
execFileSync(winokit, ['synth', '--out', join(work, 'syn'), '--count', '12', '--image-size', '64']);
const pool = join(work, 'syn', 'images');
writeFileSync(join(work, 'q.csv'),
  'candidates,cue,associations,ID\n' +
  '"[""ex_0_img_0"",""ex_0_img_1"",""ex_1_img_0"",""ex_1_img_1"",""ex_2_img_0""]",pair,"[""ex_0_img_0"",""ex_0_img_1""]",q1\n');
const db = join(work, 'game.db');
const serverArgs = ['serve', '--images', pool, '--db', db, '--port', '0', '--password-cost', 'min',
  '--qualification', join(work, 'q.csv'), '--seed', '5',
  '--cache-dir', join(work, 'cache')];
let rivalIsRandom = true;
try { readFileSync(join(model, 'config.json')); serverArgs.push('--model', model); rivalIsRandom = false; } catch { /* random ViT-B/32 rival */ }
const server = spawn(winokit, serverArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/listening on (http:\/\/[^/]+\/)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error('server exited ' + code)));
  setTimeout(() => reject(new Error('server did not start: ' + out)), 120000);
});

const browser = await chromium.launch({ executablePath: chromePath, args: ['--no-sandbox'] });
const desktop = { viewport: { width: 1280, height: 900 } };
const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

async function player(name, options = desktop) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.on('pageerror', (e) => { throw e; });
  await page.goto(base);
  await page.fill('#name', name);
  await page.fill('#password', 'password-' + name);
  await page.click('#register-btn');
  await page.waitForURL(/#qualify/);
  await page.getByRole('heading', { name: 'Qualification test' }).waitFor();
  await page.getByRole('checkbox', { name: 'ex_0_img_0' }).check();
  await page.getByRole('checkbox', { name: 'ex_0_img_1' }).check();
  await page.click('#qualify-submit');
  await page.waitForURL(/#create/);
  return page;
}

try {
  // The spymaster.
  const spy = await player('spy1');
  ok('register and pass the qualification test');
  if (rivalIsRandom) assert.match(await spy.textContent('#rival-note'), /random-weight/);
  await spy.getByRole('heading', { name: 'Spymaster' }).waitFor();
  const boxes = spy.locator('#main .grid input[type=checkbox]');
  const n = await boxes.count();
  assert.ok([5, 6, 10, 12].includes(n), 'candidates: ' + n);
  const gold = [await boxes.nth(n - 1).getAttribute('value'), await boxes.nth(n - 2).getAttribute('value')];
  await boxes.nth(n - 1).check();
  await boxes.nth(n - 2).check();
  await spy.fill('#cue', 'ocean');
  await spy.click('#submit-round');
  await spy.locator('#model-score').waitFor();
  assert.match(await spy.textContent('#model-score'), /Model score: \d+\.\d/);
  assert.match(await spy.textContent('#fool-score'), /Fool-the-AI: \d+\.\d/);
  assert.equal(await spy.locator('#round-result .card.model').count(), 2);
  ok('create a round and see the rival\'s picks and scores');

  // Three solvers: desktop, phone, keyboard only.
  for (const [name, options, keyboard] of [['solver1', desktop, false], ['solver2', phone, false], ['solver3', desktop, true]]) {
    const page = await player(name, options);
    await page.goto(base + '#solve');
    await page.locator('#solve-cue').waitFor();
    assert.equal(await page.textContent('#solve-cue'), 'ocean');
    assert.equal(await page.locator('.card.gold').count(), 0, 'no answer shown before solving');
    for (const g of gold) {
      const box = page.getByRole('checkbox', { name: g });
      if (keyboard) { await box.focus(); await page.keyboard.press('Space'); } else { await box.check(); }
    }
    if (keyboard) { await page.locator('#submit-solve').focus(); await page.keyboard.press('Enter'); } else { await page.click('#submit-solve'); }
    await page.locator('#solve-score').waitFor();
    assert.equal(await page.textContent('#solve-score'), 'Your score: 100.0');
    ok('solve it: ' + name + (keyboard ? ' (keyboard only)' : options === phone ? ' (phone-sized screen)' : ''));
    await page.context().close();
  }

  await spy.goto(base + '#dashboard');
  await spy.locator('#dash-rounds tbody tr').first().waitFor();
  const row = await spy.locator('#dash-rounds tbody tr').first().textContent();
  assert.match(row, /ocean/);
  assert.match(row, /complete/);
  assert.match(row, /100\.0/);  // solvable-by-humans
  ok('dashboard shows the completed association');
  await spy.goto(base + '#leaderboard');
  await spy.locator('#lb-solvers tbody tr').first().waitFor();
  assert.match(await spy.locator('#lb-spymasters').textContent(), /spy1/);
  assert.equal(await spy.locator('#lb-solvers tbody tr').count(), 3);
  ok('leaderboard lists the spymaster and the three solvers');

  const csv = execFileSync(winokit, ['game', 'export', '--db', db, '--min-solvable', '80']).toString();
  assert.match(csv, /ocean/);
  assert.match(csv, /^candidates,cue,associations,score_fool_the_ai/);
  ok('export contains the association');

  // A second round, reported by a solver, reviewed by the admin.
  await spy.goto(base + '#create');
  await spy.locator('#cue').waitFor();
  const b2 = spy.locator('#main .grid input[type=checkbox]');
  await b2.nth(0).check();
  await b2.nth(1).check();
  await spy.fill('#cue', 'mystery');
  await spy.click('#submit-round');
  await spy.locator('#model-score').waitFor();
  const reporter = await player('reporter');
  await reporter.goto(base + '#solve');
  await reporter.locator('#solve-cue').waitFor();
  reporter.once('dialog', (d) => d.accept('not a real association'));
  await reporter.click('#report');
  await reporter.getByText('nothing to solve right now').waitFor();
  ok('report hides the association at once');
  const admin = await player('admin1');
  // The admin role by secret: granted offline to the existing account, never by name at start.
  execFileSync(winokit, ['game', 'admin', '--db', db, '--grant', 'admin1']);
  await admin.goto(base + '#admin');
  await admin.reload();
  await admin.getByText('not a real association').waitFor();
  await admin.getByRole('button', { name: 'Restore' }).click();
  await admin.getByText('Nothing to review.').waitFor();
  ok('admin reviews and restores it');
} finally {
  server.kill('SIGTERM');
  await browser.close();
}
console.log('browser: ' + passed + ' passed, 0 failed (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)');
process.exit(0);
