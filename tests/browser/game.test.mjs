// A whole WinoGAViL game in Debian's chromium, driven by playwright-core, with four players in
// which every player always has a next action (issue 24, item 5): a new name signs in with
// Enter and is offered the account; a failed qualification attempt shows the attempts left
// (its error in view on a phone); a spymaster whose qualification association is solvable by
// 77.8 < 80 retries with new images; a spymaster whose association is still being solved sees a
// wait state naming what unblocks it, and is unblocked when the others solve it; reports before
// and after solving and from the dashboard; a restored association is not given back to its
// reporter; images carry no names (not in the HTML, alt texts, or any API reply) and come as
// thumbnails; leaderboard ranks and "you"; the dashboard fits a phone. Then the HTML reports
// (eval, compare, WinoGAViL-style markdown pages) at 390 and 1280 px. Screenshots of every page
// at both widths go to tests/browser/screenshots/ (or $WINOKIT_SCREENSHOTS).
//
//   node game.test.mjs <winokit binary> <shared dir>
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [winokit, shared] = process.argv.slice(2);
if (!winokit) throw new Error('usage: node game.test.mjs <winokit> <shared dir>');
const chromePath = process.env.CHROMIUM || '/usr/bin/chromium';
const work = mkdtempSync(join(tmpdir(), 'winokit-browser-'));
const model = join(shared || '', 'golden/clip/models/tiny-quickgelu-hf');

const shots = process.env.WINOKIT_SCREENSHOTS || join(dirname(fileURLToPath(import.meta.url)), 'screenshots');
mkdirSync(shots, { recursive: true });
async function shot(page, name) {
  const w = page.viewportSize().width;
  await page.screenshot({ path: join(shots, name + '-' + w + '.png'), fullPage: true });
}
// The page at both widths: no horizontal overflow of the document, and a screenshot of each.
async function bothWidths(page, name) {
  const original = page.viewportSize();
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.waitForTimeout(50);
    const sw = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(sw <= width, name + ' at ' + width + ' px is ' + sw + ' px wide');
    await shot(page, name);
  }
  await page.setViewportSize(original);
}
async function noNullText(page, where) {
  const text = await page.locator('body').innerText();
  assert.ok(!/\bnull\b|\bundefined\b/.test(text), where + ' shows null/undefined: ' + text.slice(0, 300));
}

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

// Every reply of the API and every page's HTML is checked for the pool's image names.
const poolNames = readdirSync(pool).map((f) => f.replace(/\.[^.]+$/, ''));
const leaks = [];
function leakCheck(text, where) {
  for (const n of poolNames) if (text.includes(n)) leaks.push(where + ' contains ' + n);
}
async function htmlLeaks(page, where) {
  leakCheck(await page.content(), where + ' HTML');
  assert.deepEqual(leaks, [], 'no image names reach the client');
}

async function newPage(options) {
  const context = await browser.newContext(options);
  await context.addInitScript(() => { window.WK_POLL_MS = 1500; });
  const page = await context.newPage();
  page.on('pageerror', (e) => { throw e; });
  page.on('response', async (r) => {
    if (!r.url().includes('/api/')) return;
    try { leakCheck(await r.text(), r.url()); } catch { /* a body already gone */ }
  });
  return page;
}

// The player's next action: one of the page's ways on (a form to submit, a link or button to
// what comes next, or a wait state with what it waits for).
async function nextAction(page, where) {
  const ways = ['#submit-round', '#submit-solve', '#qualify-submit', '#check-again', '#next-link', '#next-solve'];
  for (const w of ways) if (await page.locator(w).isVisible()) return w;
  throw new Error(where + ': no next action on the page: ' + (await page.locator('main').innerText()).slice(0, 300));
}

// Checks the group's images by position (1-based) in the grid named `group`.
async function pickImages(page, positions, group, keyboard = false) {
  const grid = page.getByRole('group', { name: group });
  const total = await grid.getByRole('checkbox').count();
  for (const i of positions) {
    const box = grid.getByRole('checkbox', { name: 'image ' + i + ' of ' + total, exact: true });
    if (keyboard) { await box.focus(); await page.keyboard.press('Space'); } else { await box.check(); }
  }
}

async function qualify(page, fail = false) {
  await page.getByRole('heading', { name: 'Qualification test' }).waitFor();
  assert.match(await page.textContent('#attempts-left'), /Attempts left: 3 of 3/);
  const group = /Test 1: images for the cue/;
  if (fail) {
    await page.setViewportSize({ width: 390, height: 844 });
    await pickImages(page, [3, 4], group);
    await page.click('#qualify-submit');
    const err = page.locator('#main .inline-error');
    await err.waitFor();
    assert.match(await err.textContent(), /Not passed.*2 attempts left/);
    assert.ok(await inViewport(page, err), 'the qualification error is in view on a phone');
    assert.match(await page.textContent('#attempts-left'), /Attempts left: 2 of 3/);
    await shot(page, 'game-qualify-failed');
    await page.getByRole('group', { name: group }).getByRole('checkbox', { name: 'image 3 of 5' }).uncheck();
    await page.getByRole('group', { name: group }).getByRole('checkbox', { name: 'image 4 of 5' }).uncheck();
    await page.setViewportSize({ width: 1280, height: 900 });
  }
  await pickImages(page, [1, 2], group);
  assert.match(await page.locator('#main .counter').first().textContent(), /2 of 2 selected/);
  await page.click('#qualify-submit');
  await page.waitForURL(/#create/);
}

async function player(name, options = desktop) {
  const page = await newPage(options);
  await page.goto(base);
  await page.locator('#name').waitFor();
  await page.fill('#name', name);
  await page.fill('#password', 'password-' + name);
  await page.click('#register-btn');
  await page.waitForURL(/#qualify/, { timeout: 15000 }).catch(async (e) => {
    throw new Error(name + ' did not reach the test: ' + (await page.locator('body').innerText()).slice(0, 400) + ' (' + e.message + ')');
  });
  assert.equal(await page.textContent('#whoami'), 'Signed in as ' + name);
  assert.match(await page.textContent('#flash'), new RegExp('Welcome, ' + name));  // kept across the page change
  await qualify(page);
  return page;
}

async function gridLabelsDistinct(page, where) {
  const labels = await page.locator('#main .grid[role=group]').evaluateAll((g) => g.map((x) => x.getAttribute('aria-label')));
  assert.equal(new Set(labels).size, labels.length, where + ': image groups have distinct labels: ' + labels.join(' | '));
}

async function focusIsResult(page, where) {
  const tag = await page.evaluate(() => document.activeElement && document.activeElement.tagName + ' ' + document.activeElement.textContent);
  assert.match(tag, /^H3 /, where + ': the focus moves to the result (' + tag + ')');
}

// Submits a round: gold by position, the cue; returns the result's text.
async function createRound(page, cue, gold) {
  await go(page, '#create');
  await page.locator('#cue').waitFor();
  await pickImages(page, gold, /candidate images$/);
  await page.fill('#cue', cue);
  await page.click('#submit-round');
  await page.locator('#model-score').waitFor();
  await focusIsResult(page, 'round result');
  return page;
}

// Solves the task shown, by positions; returns the score's text.
async function solveShown(page, positions, keyboard = false) {
  const cue = await page.textContent('#solve-cue');
  await pickImages(page, positions, 'Candidate images for the cue \u201c' + cue + '\u201d', keyboard);
  if (keyboard) { await page.locator('#submit-solve').focus(); await page.keyboard.press('Enter'); } else { await page.click('#submit-solve'); }
  await page.locator('#solve-score').waitFor();
  await focusIsResult(page, 'solve result');
  return page.textContent('#solve-score');
}

// Opens a page afresh (the menu link when it is the page shown: a same-URL goto would not
// start it again) and waits until the new view replaced the old one.
async function go(page, hash) {
  await page.evaluate(() => { const m = document.createElement('i'); m.id = 'stale-marker'; document.getElementById('main').append(m); });
  if (new URL(page.url()).hash === hash) await page.click('nav a[href="' + hash + '"]'); else await page.goto(base + hash);
  await page.locator('#stale-marker').waitFor({ state: 'detached' });
}

// Runs `action` and waits until the view it starts has replaced the one shown.
async function fresh(page, action) {
  await page.evaluate(() => { const m = document.createElement('i'); m.id = 'stale-marker'; document.getElementById('main').append(m); });
  await action();
  await page.locator('#stale-marker').waitFor({ state: 'detached' });
}

async function openSolve(page) {
  await go(page, '#solve');
  await page.locator('#solve-cue, #wait, #nothing, #next-link').first().waitFor();
  return (await page.locator('#solve-cue').isVisible()) ? page.textContent('#solve-cue') : null;
}

async function inViewport(page, locator) {
  const box = await locator.boundingBox();
  const vp = page.viewportSize();
  return box && box.y >= 0 && box.y + box.height <= vp.height && box.x >= 0 && box.x + box.width <= vp.width;
}

// The HTML reports: eval (with the example browser), compare, a markdown-page report.
async function checkReports() {
  const rep = join(work, 'reports');
  mkdirSync(rep, { recursive: true });
  execFileSync(winokit, ['synth', '--out', join(work, 'syn2'), '--count', '40', '--image-size', '256', '--seed', '4']);
  const data = join(work, 'syn2');
  const run = (args) => execFileSync(winokit, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  run(['eval', '--data', data, '--scorer', 'bag-of-words', '--quiet', '--html', join(rep, 'eval.html'), '--scores-out', join(rep, 'bow.jsonl')]);
  run(['eval', '--data', data, '--scorer', 'random', '--quiet', '--scores-out', join(rep, 'random.jsonl')]);
  run(['eval', '--data', data, '--scorer', 'oracle', '--quiet', '--scores-out', join(rep, 'oracle.jsonl'), '--html', join(rep, 'eval-link.html'), '--html-images', 'link']);
  run(['compare', '--data', data, '--quiet', '--html', join(rep, 'compare.html'), 'oracle=' + join(rep, 'oracle.jsonl'),
    'bag-of-words=' + join(rep, 'bow.jsonl'), 'random=' + join(rep, 'random.jsonl')]);
  const pages = ['eval', 'compare', 'eval-link'];
  if (!rivalIsRandom) {  // a markdown-page report (retrieval) with the tiny checkpoint
    run(['retrieval', '--data', data, '--model', model, '--quiet', '--no-cache', '--html', join(rep, 'retrieval.html')]);
    pages.push('retrieval');
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
  const page = await context.newPage();
  page.on('pageerror', (e) => { throw e; });
  const external = [];
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) external.push(r.url()); });
  for (const name of pages) {
    await page.goto('file://' + join(rep, name + '.html'));
    await bothWidths(page, 'report-' + name);
  }
  assert.deepEqual(external, [], 'reports load nothing from outside');
  ok('reports: no horizontal overflow at 390 and 1280 px, nothing loaded from outside, screenshots written');

  // The example browser: outcome filter, tag filter, sort by margin.
  await page.goto('file://' + join(rep, 'compare.html'));
  const items = page.locator('#examples .ex');
  const total = await items.count();
  assert.equal(total, 40);
  const images = await page.locator('#examples img').evaluateAll((imgs) => imgs.map((i) => i.src.slice(0, 23)));
  assert.ok(images.length === 80 && images.every((s) => s === 'data:image/jpeg;base64,'), 'thumbnails are embedded');
  assert.ok(await page.locator('#examples img').first().evaluate((i) => i.complete && i.naturalWidth > 0 && i.naturalWidth <= 160));
  await page.selectOption('#f-outcome', 'not-group');  // outcome of the first run (oracle): none
  assert.match(await page.textContent('#ex-count'), /^0 of 40/);
  await page.selectOption('#f-outcome', '');
  await page.selectOption('#f-model', '0:1:4');  // oracle right, bag-of-words wrong
  const shown = await page.locator('#examples .ex:not([hidden])').count();
  assert.ok(shown > 0 && shown <= 40);
  for (const o of await page.locator('#examples .ex:not([hidden])').evaluateAll((e) => e.map((x) => x.dataset.o))) {
    const [a, b] = o.split(',').map(Number);
    assert.ok((a & 4) && !(b & 4), 'model filter: ' + o);
  }
  await page.selectOption('#f-model', '');
  const tag = await page.locator('#f-tag option').nth(1).getAttribute('value');
  await page.selectOption('#f-tag', tag);
  for (const t of await page.locator('#examples .ex:not([hidden])').evaluateAll((e) => e.map((x) => x.dataset.tags))) {
    assert.ok(t.split('|').includes(tag), 'tag filter');
  }
  await page.selectOption('#f-tag', '');
  await page.selectOption('#f-sort', 'margin-asc');
  const m = await page.locator('#examples .ex').evaluateAll((e) => e.map((x) => Number(x.dataset.margin.split(',')[0])));
  assert.deepEqual(m, [...m].sort((a, b) => a - b), 'sorted by margin');
  // Keyboard: the filters are reachable with Tab and change with the arrow keys.
  await page.focus('#f-outcome');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.$eval('#f-outcome', (s) => s.value), 'group');
  assert.match(await page.textContent('#ex-count'), /^40 of 40/);
  ok('example browser: filters by outcome, model disagreement and tag; sorts by margin; keyboard works');

  await page.goto('file://' + join(rep, 'eval.html'));
  assert.match(await page.textContent('.headline'), /Group score/);
  assert.equal(await page.locator('table.prov').count(), 1, 'provenance is a table');
  assert.ok((await page.locator('mark').count()) > 0, 'differing words are marked');
  console.log('# report sizes: eval.html ' + statSync(join(rep, 'eval.html')).size + ' bytes (40 examples, embedded), eval-link.html ' + statSync(join(rep, 'eval-link.html')).size);
  ok('eval report: headline summary, provenance table, marked caption differences');
  await context.close();
}

try {
  // ana: a new name on the sign-in form with Enter is offered the account.
  const ana = await newPage(desktop);
  await ana.goto(base);
  await ana.locator('#name').waitFor();
  await bothWidths(ana, 'game-login');
  await ana.fill('#name', 'ana');
  await ana.fill('#password', 'password-ana');
  await ana.locator('#password').press('Enter');
  const offer = ana.locator('#create-instead');
  await offer.waitFor();
  assert.match(await ana.locator('#main .inline-error').textContent(), /no such account: create one\?/);
  await shot(ana, 'game-login-no-account');
  await offer.click();
  await ana.waitForURL(/#qualify/);
  await bothWidths(ana, 'game-qualify');
  await htmlLeaks(ana, 'qualification page');
  const alts = await ana.locator('#main img').evaluateAll((i) => i.map((x) => x.alt));
  assert.deepEqual(alts, ['image 1 of 5', 'image 2 of 5', 'image 3 of 5', 'image 4 of 5', 'image 5 of 5'], 'alt texts give positions');
  ok('a new name on Enter: "no such account: create one?", then the account; images described by position');
  await qualify(ana, true);
  ok('qualification: attempts left shown, a failed attempt\'s error in view on a phone, then passed');

  // ana's qualification association: the last two images, cue "ocean".
  await ana.locator('#creator-note').waitFor();
  assert.match(await ana.textContent('#creator-note'), /attempt 1/);
  await noNullText(ana, 'spymaster page');
  await bothWidths(ana, 'game-spymaster');
  const n = await ana.locator('#main .grid input[type=checkbox]').count();
  assert.ok([5, 6, 10, 12].includes(n), 'candidates: ' + n);
  // A bad Submit (no images, no cue): the error shows next to the button, in the viewport.
  await ana.setViewportSize({ width: 390, height: 844 });
  await ana.evaluate(() => document.getElementById('cue').removeAttribute('required'));
  await ana.click('#submit-round');
  const spyErr = ana.locator('#main .inline-error').first();
  await spyErr.waitFor();
  assert.ok(await inViewport(ana, spyErr), 'the Submit error is in the viewport on a phone');
  await shot(ana, 'game-spymaster-error');
  await ana.setViewportSize({ width: 1280, height: 900 });
  // Thumbnails at the size shown, not the originals.
  const src = await ana.locator('#main .grid img').first().evaluate((i) => i.currentSrc || i.src);
  assert.match(src, /\/images\/[0-9a-f]{24}\?w=(160|320|640)$/, 'a thumbnail by opaque id: ' + src);
  await pickImages(ana, [n - 1, n], /candidate images$/);
  await ana.fill('#cue', 'ocean');
  let release;
  const held = new Promise((r) => { release = r; });
  await ana.route('**/api/rounds/*/submit', async (route) => { await held; await route.continue(); });
  await ana.click('#submit-round');
  await ana.waitForFunction(() => document.getElementById('submit-round').disabled);
  assert.match(await ana.textContent('#submit-round'), /Asking the rival/);
  release();
  await ana.locator('#model-score').waitFor();
  await ana.unroute('**/api/rounds/*/submit');
  await focusIsResult(ana, 'round result');
  assert.equal(await ana.locator('#main .inline-error:visible').count(), 0, 'old errors are cleared after a success');
  assert.match(await ana.textContent('#fool-score'), /Fool-the-AI: \d+\.\d/);
  assert.equal(await ana.locator('#round-result .badge.gold').count(), 2, 'your images are marked in words');
  assert.equal(await ana.locator('#round-result .badge.model').count(), 2, 'rival picks are marked in words');
  await gridLabelsDistinct(ana, 'round result');
  await bothWidths(ana, 'game-spymaster-result');
  await nextAction(ana, 'ana after creating');
  ok('ana creates "ocean" and sees the rival\'s picks; focus on the result; thumbnails by opaque id');

  // ana has nothing to solve and her association waits for three solvers: a wait state.
  assert.equal(await openSolve(ana), null);
  await ana.locator('#wait').waitFor();
  assert.match(await ana.textContent('#wait-reason'), /\u201cocean\u201d \(0 of 3 solvers\).*3 more players must join/);
  await bothWidths(ana, 'game-solve-wait');
  await go(ana, '#create');
  await ana.locator('#wait').waitFor();
  assert.match(await ana.textContent('#wait-reason'), /ocean/);
  await bothWidths(ana, 'game-spymaster-wait');
  ok('ana waits: the Spymaster and Solve pages say what for (0 of 3 solvers, 3 more players must join)');

  // bo (phone), cy (keyboard), di (desktop) join; bo and cy find ocean's images, di one of two.
  const bo = await player('ben', phone);
  const cy = await player('cat');
  const di = await player('dan');
  assert.equal(await openSolve(bo), 'ocean');
  assert.equal(await bo.locator('.card.gold').count(), 0, 'no answer shown before solving');
  await bo.click('#submit-solve');  // nothing selected
  const boErr = bo.locator('#main .inline-error').first();
  await boErr.waitFor();
  assert.ok(await inViewport(bo, boErr), 'the solve error is in the viewport on a phone');
  await shot(bo, 'game-solve-error');
  await htmlLeaks(bo, 'solve page');
  assert.equal(await solveShown(bo, [n - 1, n]), 'Your score: 100.0');
  await gridLabelsDistinct(bo, 'solve result');
  await bothWidths(bo, 'game-solve-result');
  assert.equal(await openSolve(cy), 'ocean');
  await bothWidths(cy, 'game-solve');
  assert.equal(await solveShown(cy, [n - 1, n], true), 'Your score: 100.0');
  // The wait ends by itself once the last solver answers: ana's page checks again.
  await ana.waitForFunction(() => /2 of 3 solvers/.test((document.getElementById('wait-reason') || {}).textContent || ''));
  assert.equal(await openSolve(di), 'ocean');
  assert.match(await solveShown(di, [1, n]), /Your score: 33\.3/);
  ok('bo (phone), cy (keyboard only) and di solve ocean: 100, 100, 33.3');

  // Solvable-by-humans 77.8 < 80: ana failed her attempt, and retries with new images.
  await ana.locator('#creator-note').waitFor({ timeout: 10000 });
  assert.match(await ana.textContent('#creator-note'), /solvable-by-humans 77\.8.*try again/);
  await nextAction(ana, 'ana after a failed attempt');
  await bothWidths(ana, 'game-spymaster-retry');
  ok('ana\'s wait ended by itself; solvable-by-humans 77.8 < 80: she retries with new images');
  await createRound(ana, 'forest', [1, 2]);

  // bo creates "winter"; he cannot create again until it is solved, so he solves forest
  // meanwhile, then waits for winter's solvers.
  await createRound(bo, 'winter', [1, 2]);
  await go(bo, '#create');
  await bo.locator('#wait').waitFor();
  assert.match(await bo.textContent('#wait-reason'), /winter.*0 of 3 solvers/);
  await bo.click('#solve-meanwhile');
  await bo.locator('#solve-cue').waitFor();
  assert.equal(await bo.textContent('#solve-cue'), 'forest');
  await solveShown(bo, [1, 2]);
  await fresh(bo, () => bo.click('#next-solve'));
  await bo.locator('#wait').waitFor();
  assert.match(await bo.textContent('#wait-reason'), /winter.*0 of 3 solvers/);
  ok('bo: creates winter, waits, solves forest meanwhile, then waits on the Solve page');

  // cy solves forest and winter (in the order given), then creates "desert"; di solves forest
  // and winter (reporting the first after solving it), is given desert and reports it before
  // solving. (Rounds are served oldest first; a player's draft takes its id when the Spymaster
  // page first opens, so the order is not the order of submission.)
  const seen = [await openSolve(cy)];
  await solveShown(cy, [1, 2]);
  await fresh(cy, () => cy.click('#next-solve'));
  seen.push(await cy.textContent('#solve-cue'));
  assert.deepEqual(seen.sort(), ['forest', 'winter']);
  await solveShown(cy, [1, 2]);
  await createRound(cy, 'desert', [1, 2]);
  di.on('dialog', () => { throw new Error('no browser dialogs: the report form is in the page'); });
  let cue = await openSolve(di), reportedAfter = false, reportedBefore = false;
  for (let i = 0; i < 3 && cue; i++) {
    if (cue === 'desert') {
      assert.equal(await di.textContent('#flash'), '', 'an earlier task\'s report message is gone');
      await di.click('#main form [data-report]');
      await di.locator('#main textarea').waitFor();
      await bothWidths(di, 'game-report-form');
      await di.locator('#main textarea').fill('not a real association');
      await fresh(di, () => di.locator('#main .report-form button[type=submit]').click());
      reportedBefore = true;
    } else {
      await solveShown(di, [1, 2]);
      if (!reportedAfter) {  // a report after solving
        await di.click('#solve-result [data-report]');
        await di.locator('#solve-result textarea').fill('a dull association');
        await di.locator('#solve-result form button[type=submit]').click();
        await di.getByText('Reported: an admin will review it.').waitFor();
        reportedAfter = true;
      }
      await fresh(di, () => di.click('#next-solve'));
    }
    cue = (await di.locator('#solve-cue').isVisible()) ? await di.textContent('#solve-cue') : null;
  }
  assert.ok(reportedBefore && reportedAfter, 'di reported desert before and another after solving');
  await di.locator('#nothing').waitFor();
  assert.match(await di.locator('main').innerText(), /Create one/);
  await nextAction(di, 'di after reporting');
  await di.click('#next-link');
  await di.locator('#cue').waitFor();
  ok('reports before and after solving; a reporter is not given the association again, and can create');

  // ana solves winter (its third solver): bo's wait ends.
  assert.equal(await openSolve(ana), 'winter');
  await solveShown(ana, [1, 2]);
  await bo.locator('#wait').waitFor({ state: 'detached', timeout: 10000 });
  await nextAction(bo, 'bo after winter is solved');
  ok('winter solved by cy, di and ana: bo\'s wait ends by itself');

  // desert: di reported it, so with four players it can only get two solvers: cy's wait says
  // another player must join.
  assert.equal(await openSolve(ana), 'desert');
  await solveShown(ana, [1, 2]);
  assert.equal(await openSolve(bo), 'desert');
  await solveShown(bo, [1, 2]);
  await go(cy, '#create');
  await cy.locator('#wait').waitFor();
  assert.match(await cy.textContent('#wait-reason'), /desert.*2 of 3 solvers.*1 more player must join/);
  await bothWidths(cy, 'game-wait-join');
  ok('cy waits for desert\'s third solver and is told one more player must join');

  // The admin restores desert; it is still not given to di, who reported it.
  const boss = await player('boss');
  execFileSync(winokit, ['game', 'admin', '--db', db, '--grant', 'boss']);
  await boss.goto(base + '#admin');
  await boss.reload();
  await boss.getByText('not a real association').waitFor();
  await noNullText(boss, 'admin page');
  await bothWidths(boss, 'game-admin');
  await htmlLeaks(boss, 'admin page');
  await boss.getByRole('button', { name: 'Remove\u2026' }).first().click();
  const confirm = boss.locator('.confirm:visible');
  await confirm.waitFor();
  assert.match(await confirm.textContent(), /for good/);
  await shot(boss, 'game-admin-confirm');
  await boss.getByRole('button', { name: 'Cancel' }).click();
  const desertReport = boss.locator('section.report', { hasText: 'not a real association' });
  await desertReport.getByRole('button', { name: 'Restore' }).click();
  await boss.getByText('Restored report').waitFor();
  await go(di, '#solve');
  await di.locator('#solve-cue, #wait, #nothing').first().waitFor();
  assert.notEqual(await di.locator('#solve-cue').isVisible() ? await di.textContent('#solve-cue') : '', 'desert', 'a restored association is not given back to its reporter');
  // boss, a fifth player, can be desert's third solver: cy's wait ends.
  assert.equal(await openSolve(boss), 'desert');
  await solveShown(boss, [1, 2]);
  await cy.locator('#wait').waitFor({ state: 'detached', timeout: 10000 });
  await nextAction(cy, 'cy after desert is solved');
  ok('the admin restores desert, di is not given it again; a fifth player solves it and cy goes on');

  // Dashboard: report one's own association; the tables fit a phone.
  await go(ana, '#dashboard');
  await ana.locator('#dash-rounds tbody tr').first().waitFor();
  assert.match(await ana.locator('#dash-rounds').textContent(), /ocean/);
  assert.match(await ana.textContent('#dash-status'), /Spymaster: (qualified|last qualification attempt missed)/);
  await ana.locator('#dash-rounds tr', { hasText: 'ocean' }).getByRole('button', { name: /Report association/ }).click();
  await ana.locator('#dash-report textarea').fill('my own cue was too easy');
  await ana.locator('#dash-report button[type=submit]').click();
  await ana.getByText(/Reported association \d+/).waitFor();
  // The dashboard is drawn again (after the message): the row says so instead of a button.
  await ana.locator('#dash-rounds tr', { hasText: 'ocean' }).filter({ hasText: 'reported' }).waitFor();
  assert.equal(await ana.locator('#dash-rounds tr', { hasText: 'ocean' }).getByRole('button').count(), 0);
  await noNullText(ana, 'dashboard');
  await bothWidths(ana, 'game-dashboard');
  await ana.setViewportSize({ width: 390, height: 844 });
  const fits = await ana.evaluate(() => [...document.querySelectorAll('.table-wrap')].every((w) => w.scrollWidth <= w.clientWidth + 1));
  assert.ok(fits, 'the dashboard tables fit a phone without scrolling sideways');
  await ana.setViewportSize({ width: 1280, height: 900 });
  ok('dashboard: report one\'s own association; the tables fit 390 px');

  // Leaderboard: ranks and "you"; the flash of the report is gone.
  await go(ana, '#leaderboard');
  await ana.locator('#lb-solvers tbody tr').first().waitFor();
  assert.equal(await ana.textContent('#flash'), '', 'a stale message is cleared on the next page');
  const me = ana.locator('#lb-solvers tr.me');
  assert.match(await me.textContent(), /^\d+ana \(you\)/);
  assert.equal(await ana.locator('#lb-solvers tbody tr').count(), 5);
  await bothWidths(ana, 'game-leaderboard');
  ok('leaderboard: ranks, "(you)" marked; stale messages cleared');

  // A player who fails the test three times sees why instead of the form.
  const eve = await newPage(phone);
  await eve.goto(base);
  await eve.locator('#name').waitFor();
  await eve.fill('#name', 'eve');
  await eve.fill('#password', 'password-eve');
  await eve.click('#register-btn');
  await eve.waitForURL(/#qualify/);
  for (let attempt = 1; attempt <= 3; attempt++) {
    await eve.locator('#qualify-submit').waitFor();
    await pickImages(eve, [4, 5], /Test 1: images for the cue/);
    await eve.click('#qualify-submit');
    if (attempt < 3) {
      await eve.getByText((3 - attempt) + ' attempt' + (attempt === 2 ? '' : 's') + ' left').waitFor();
      for (const i of [4, 5]) await eve.getByRole('checkbox', { name: 'image ' + i + ' of 5' }).uncheck();
    }
  }
  await eve.locator('#locked').waitFor();
  assert.match(await eve.textContent('#locked'), /No attempts left.*3 times.*last mean score was 0\.0/);
  assert.equal(await eve.locator('#qualify-submit').count(), 0, 'no form for a locked-out player');
  await bothWidths(eve, 'game-qualify-locked');
  ok('a player out of qualification attempts sees why instead of the form');

  const csv = execFileSync(winokit, ['game', 'export', '--db', db, '--min-solvable', '80']).toString();
  assert.match(csv, /^candidates,cue,associations,score_fool_the_ai/);
  assert.match(csv, /winter/);
  assert.doesNotMatch(csv, /ocean/);  // solvable-by-humans 77.8
  ok('export holds winter, not ocean (77.8)');
  assert.deepEqual(leaks, [], 'no image names in any API reply');
  ok('no image name in any API reply or page');
  await checkReports();
} finally {
  server.kill('SIGTERM');
  await browser.close();
}
console.log('browser: ' + passed + ' passed, 0 failed (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)');
process.exit(0);
