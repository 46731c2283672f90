// The WinoGAViL game client: plain DOM, no framework. Every text from the server goes through
// textContent (never innerHTML); the CSRF token from /api/me or sign-in goes in X-CSRF-Token.
'use strict';

const state = { csrf: '', me: null, status: null };
// Views load asynchronously; a view only renders if no navigation happened since it started.
let navSeq = 0;
const main = () => document.getElementById('main');

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v;
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (v !== false && v !== undefined && v !== null) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

// The banner under the header. `keep`: survive the next page change (a "Welcome" followed by
// a redirect); otherwise a page change clears it.
function flash(message, isError = false, keep = false) {
  const f = document.getElementById('flash');
  f.textContent = message || '';
  f.className = isError ? 'error' : (message ? 'ok' : '');
  // Shown on this page, and on the next one only when `keep`: never older than that.
  state.flashUntil = navSeq + (keep && message ? 1 : 0);
}
// How often a wait state checks again by itself (tests shorten it).
const POLL_MS = Number(window.WK_POLL_MS) || 15000;

// An error shown next to the control that caused it, scrolled into view; `box` comes from
// errorBox() and sits right after that control.
function errorBox() { return el('p', { class: 'inline-error', role: 'alert', hidden: true }); }
function showError(box, message) {
  box.textContent = '\u26a0 ' + message;
  box.hidden = false;
  box.scrollIntoView({ block: 'center', behavior: 'instant' });
}
function clearError(box) { if (box) { box.textContent = ''; box.hidden = true; } }

// Runs a request with its buttons disabled and marked busy, so a click is answered at once and
// cannot be sent twice.
async function busy(buttons, label, fn) {
  const saved = buttons.map(b => [b, b.textContent, b.disabled]);
  for (const b of buttons) { b.disabled = true; b.setAttribute('aria-busy', 'true'); }
  if (buttons[0] && label) buttons[0].textContent = label;
  main().setAttribute('aria-busy', 'true');
  try { return await fn(); } finally {
    for (const [b, text, disabled] of saved) { b.disabled = disabled; b.removeAttribute('aria-busy'); b.textContent = text; }
    main().removeAttribute('aria-busy');
  }
}

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: 'same-origin' };
  if (method !== 'GET') {
    opts.headers['Content-Type'] = 'application/json';
    opts.headers['X-CSRF-Token'] = state.csrf;
    opts.body = JSON.stringify(body || {});
  }
  const res = await fetch(path, opts);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error((data.error && data.error.message) || ('HTTP ' + res.status));
    err.code = data.error && data.error.code;
    err.status = res.status;
    throw err;
  }
  return data;
}

function fmt(x) { return x === null || x === undefined ? '-' : Number(x).toFixed(1); }

function setView(seq, title, ...nodes) {
  if (seq !== navSeq) return;
  const m = main();
  const h = el('h2', { text: title, tabindex: '-1' });
  m.replaceChildren(h, ...nodes.filter(n => n !== null && n !== undefined && n !== false));
  if (state.navigated) h.focus({ preventScroll: false });
}

// A grid of candidate images, by opaque id (the client never knows an image's name): `pick` =
// max selectable (0: display only), `min` the fewest, `label` the group's accessible name
// (distinct per grid). Images are described by position ("image 3 of 10"), never by name.
// `marks` labels result cards in words and icons (not colour alone): gold (the right answer or
// your associations), model (the rival's picks), mine (your picks); `goldLabel` names gold.
function imgSrc(id, w) { return '/images/' + encodeURIComponent(id) + '?w=' + w; }
function imageGrid(ids, pick, marks = {}, min = 0, label = '') {
  const grid = el('div', { class: 'grid', role: 'group', 'aria-label': label || (pick ? 'Candidate images' : 'Result') });
  const boxes = [];
  const counter = pick ? el('p', { class: 'counter', 'aria-live': 'polite' }) : null;
  const updateCounter = () => {
    if (!counter) return;
    const k = boxes.filter(b => b.checked).length;
    counter.textContent = (min && min !== pick ? k + ' selected (choose ' + min + '\u2013' + pick + ')' : k + ' of ' + pick + ' selected');
    counter.classList.toggle('done', k >= (min || pick));
  };
  ids.forEach((id, i) => {
    const where = 'image ' + (i + 1) + ' of ' + ids.length;
    const box = el('input', { type: 'checkbox', value: id, 'aria-label': where, hidden: pick ? false : true });
    const has = (key) => marks[key] && marks[key].includes(id);
    const badges = [];
    if (has('gold')) badges.push(el('span', { class: 'badge gold', text: '\u2605 ' + (marks.goldLabel || 'right answer') }));
    if (has('mine')) badges.push(el('span', { class: 'badge mine', text: '\u2714 your pick' }));
    if (has('model')) badges.push(el('span', { class: 'badge model', text: '\u25ce rival\u2019s pick' }));
    const card = el('label', { class: 'card' + (has('gold') ? ' gold' : '') + (has('model') ? ' model' : '') + (has('mine') ? ' mine' : '') },
      el('img', { src: imgSrc(id, 320), srcset: imgSrc(id, 160) + ' 160w, ' + imgSrc(id, 320) + ' 320w, ' + imgSrc(id, 640) + ' 640w',
        sizes: '(max-width: 480px) 45vw, 180px', alt: where, loading: 'lazy', width: 160, height: 160 }),
      el('span', { class: 'pos' }, box, document.createTextNode(String(i + 1))),
      badges.length ? el('span', { class: 'badges' }, ...badges) : null);
    box.addEventListener('change', () => {
      card.classList.toggle('selected', box.checked);
      if (pick && boxes.filter(b => b.checked).length > pick) {
        box.checked = false; card.classList.remove('selected');
        if (counter) { counter.textContent = 'At most ' + pick + ' images: unselect one first.'; counter.classList.add('over'); return; }
      }
      if (counter) counter.classList.remove('over');
      updateCounter();
    });
    boxes.push(box);
    grid.append(card);
  });
  grid.selected = () => boxes.filter(b => b.checked).map(b => b.value);
  grid.counter = counter;
  updateCounter();
  return grid;
}

// A result block's heading takes the focus (screen readers and keyboards land on the result).
function focusResult(h) {
  h.setAttribute('tabindex', '-1');
  h.scrollIntoView({ block: 'start' });
  h.focus({ preventScroll: true });
}

// A wait state: what the player waits for, a "Check again" button, and a check by itself
// every POLL_MS while the page is shown.
function waitPanel(seq, message, again, ...links) {
  const btn = el('button', { class: 'primary', type: 'button', id: 'check-again', text: 'Check again', on: { click: again } });
  setTimeout(() => { if (seq === navSeq && document.getElementById('check-again') === btn) again(); }, POLL_MS);
  return el('div', { class: 'panel wait', id: 'wait', role: 'status' },
    el('p', { class: 'wait-title', text: 'Waiting for other players' }),
    el('p', { id: 'wait-reason', text: message }),
    el('p', { class: 'note', text: 'This page checks again by itself every ' + Math.round(POLL_MS / 1000) + ' seconds.' }),
    el('div', { class: 'actions' }, btn, ...links));
}

// Re-runs a view in place (a new navigation: an older view's answers are dropped).
function rerun(view) {
  ++navSeq;
  if (navSeq > (state.flashUntil || 0)) flash('');
  view();
}

// The in-page report form (no prompt()) for association `id`; `done` runs after a report.
let reportForms = 0;
function reportControls(id, done) {
  const fieldId = 'report-reason-' + (++reportForms);
  const reason = el('textarea', { id: fieldId, rows: 2, maxlength: 500 });
  const err = errorBox();
  const send = el('button', { class: 'primary', type: 'submit', text: 'Send the report' });
  const open = el('button', { class: 'secondary', type: 'button', 'data-report': String(id), text: 'Report this association', on: { click: () => {
    form.hidden = false; open.hidden = true; reason.focus();
  } } });
  const form = el('form', { class: 'panel report-form', hidden: true, on: { submit: async (ev) => {
    ev.preventDefault();
    clearError(err);
    await busy([send], 'Sending\u2026', async () => {
      try {
        const r = await api('POST', '/api/rounds/' + id + '/report', { reason: reason.value });
        done(r);
      } catch (e) { showError(err, e.message); }
    });
  } } },
    el('label', { class: 'field', for: fieldId, text: 'Why should this association be hidden? (offensive, not a real association, ...)' }), reason,
    send,
    el('button', { class: 'secondary', type: 'button', text: 'Cancel', on: { click: () => { form.hidden = true; open.hidden = false; open.focus(); } } }),
    err);
  return { open, form };
}

// The grid and its counter, as one block.
function pickBlock(grid) { return el('div', {}, grid, grid.counter); }

async function refreshMe() {
  try {
    const me = await api('GET', '/api/me');
    state.me = me;
    state.csrf = me.csrf;
  } catch (e) {
    state.me = null;
  }
  for (const a of document.querySelectorAll('[data-auth]')) a.hidden = !state.me;
  for (const a of document.querySelectorAll('[data-guest]')) a.hidden = !!state.me;
  for (const a of document.querySelectorAll('[data-admin]')) a.hidden = !(state.me && state.me.admin);
  const who = document.getElementById('whoami');
  if (who) { who.textContent = state.me ? 'Signed in as ' + state.me.name : ''; who.hidden = !state.me; }
}

function loginView() {
  const seq = navSeq;
  const name = el('input', { type: 'text', id: 'name', autocomplete: 'username', required: true, minlength: 3, maxlength: 32 });
  const pass = el('input', { type: 'password', id: 'password', autocomplete: 'current-password', required: true, minlength: 8 });
  const err = errorBox();
  async function go(kind) {
    clearError(err);
    await busy([signIn, register], kind === 'register' ? 'Creating\u2026' : null, async () => {
      try {
        const r = await api('POST', '/api/' + kind, { name: name.value, password: pass.value });
        state.csrf = r.csrf;
        await refreshMe();
        flash(kind === 'register' ? 'Welcome, ' + r.user.name + '.' : 'Signed in as ' + r.user.name + '.', false, true);
        location.hash = state.me && !state.me.solver_qualified ? '#qualify' : '#create';
      } catch (e) {
        showError(err, e.message);
        // A new name on Enter: offer to create the account right there.
        if (e.code === 'no_account') {
          err.append(' ', el('button', { class: 'secondary', type: 'button', id: 'create-instead', text: 'Create the account \u201c' + name.value + '\u201d',
            on: { click: () => go('register') } }));
        }
      }
    });
  }
  const signIn = el('button', { class: 'primary', type: 'submit', id: 'login-btn', text: 'Sign in' });
  const register = el('button', { class: 'secondary', type: 'button', id: 'register-btn', text: 'Create account', on: { click: () => go('register') } });
  const form = el('form', { on: { submit: (ev) => { ev.preventDefault(); go('login'); } } },
    el('label', { class: 'field', for: 'name', text: 'Name' }), name,
    el('label', { class: 'field', for: 'password', text: 'Password (8 or more characters)' }), pass,
    signIn, register, err);
  setView(seq, 'Sign in or create an account', form);
}

async function qualifyView() {
  const seq = navSeq;
  const q = await api('GET', '/api/qualification');
  if (q.solver_qualified) {
    setView(seq, 'Qualification', el('p', { text: 'You are qualified.' }),
      el('div', { class: 'actions' }, el('a', { href: '#create', text: 'Create an association' }), el('a', { href: '#solve', text: 'Solve one' })));
    return;
  }
  if (!q.instances.length) { setView(seq, 'Qualification', el('p', { text: 'This game has no qualification test.' })); return; }
  if (q.locked) {
    setView(seq, 'Qualification test',
      el('div', { class: 'panel locked', id: 'locked' },
        el('p', { class: 'wait-title', text: 'No attempts left' }),
        el('p', { text: 'You took the test ' + q.attempts_used + ' times (the limit is ' + q.attempts_allowed + '); your last mean score was ' + fmt(q.last_score) +
          ', under the pass mark of ' + q.pass_mark + '. Without it you cannot solve or create associations in this game: the test keeps the answers people give reliable.' }),
        el('p', {}, document.createTextNode('You can still follow the '), el('a', { href: '#leaderboard', text: 'leaderboard' }),
          document.createTextNode('; an admin of the game can tell you more.'))));
    return;
  }
  const grids = {};
  const items = q.instances.map((inst, i) => {
    const g = imageGrid(inst.candidates, inst.k, {}, 0, 'Test ' + (i + 1) + ': images for the cue \u201c' + inst.cue + '\u201d');
    grids[inst.id] = g;
    return el('section', {}, el('h3', { text: 'Cue: ' + inst.cue + ' (select ' + inst.k + ')' }), pickBlock(g));
  });
  const err = errorBox();
  const left = el('p', { id: 'attempts-left', class: 'attempts', text: 'Attempts left: ' + q.attempts_left + ' of ' + q.attempts_allowed +
    (q.last_score !== undefined ? ' (last mean score ' + fmt(q.last_score) + ')' : '') + '.' });
  const submit = el('button', { class: 'primary', type: 'button', id: 'qualify-submit', text: 'Submit the test', on: { click: async () => {
    const answers = {};
    for (const [id, g] of Object.entries(grids)) answers[id] = g.selected();
    clearError(err);
    await busy([submit], 'Checking\u2026', async () => {
      try {
        const r = await api('POST', '/api/qualification', { answers });
        await refreshMe();
        const text = (r.passed ? 'Passed' : 'Not passed') + ': mean score ' + fmt(r.score) + ' (pass mark ' + q.pass_mark + ').';
        if (r.passed) { flash(text, false, true); location.hash = '#create'; return; }
        if (r.attempts_left <= 0) { flash(text, true, true); rerun(qualifyView); return; }
        left.textContent = 'Attempts left: ' + r.attempts_left + ' of ' + q.attempts_allowed + '.';
        showError(err, text + ' ' + r.attempts_left + ' attempt' + (r.attempts_left === 1 ? '' : 's') + ' left: change your picks and submit again.');
      } catch (e) { showError(err, e.message); }
    });
  } } });
  // The error sits right under the button (and is scrolled into view), where a phone's user looks.
  setView(seq, 'Qualification test', el('p', { text: 'Select the images each cue describes. Pass mark: a mean score of ' + q.pass_mark + ' (the Jaccard index of your picks and the answer, 0-100).' }),
    left, ...items, submit, err);
}

const SCORE_HELP = 'Scores run from 0 to 100: the Jaccard index between two sets of images (shared images over all images picked), times 100.';

// Where a spymaster stands in their qualification, in words (null when qualified).
function creatorNote(c) {
  if (!c || c.state === 'qualified') return null;
  const bar = 'fool-the-AI above ' + c.min_fool_the_ai + ' and solvable-by-humans above ' + c.min_solvable_by_humans;
  if (c.state === 'failed') {
    return 'Your last qualification attempt scored fool-the-AI ' + fmt(c.fool_the_ai) + ' and solvable-by-humans ' + fmt(c.solvable_by_humans) +
      '; the bar is ' + bar + '. Create a new association to try again (new images).';
  }
  return 'Qualification round (attempt ' + c.attempt + '): you qualify as a spymaster once ' + c.solvers + ' other players have solved your first ' +
    (c.needed_rounds === 1 ? 'association' : c.needed_rounds + ' associations') + ', with ' + bar + '.';
}

async function createView() {
  const seq = navSeq;
  let draft;
  try { draft = await api('POST', '/api/rounds'); } catch (e) {
    if (e.code === 'qualification_pending') {
      setView(seq, 'Spymaster', waitPanel(seq, 'You cannot create yet: ' + e.message + '.', () => rerun(createView),
        el('a', { href: '#solve', id: 'solve-meanwhile', text: 'Solve others\u2019 associations meanwhile' }), el('a', { href: '#dashboard', text: 'Your dashboard' })));
      return;
    }
    const link = e.code === 'solve_first' ? el('a', { href: '#solve', id: 'next-link', text: 'Solve an association' })
      : e.code === 'not_qualified' ? el('a', { href: '#qualify', id: 'next-link', text: 'Take the qualification test' }) : null;
    setView(seq, 'Spymaster', el('p', { class: 'empty', text: e.message }), link);
    return;
  }
  const note = creatorNote(draft.creator);
  const grid = imageGrid(draft.candidates, 5, {}, 2, 'Your round\u2019s ' + draft.candidates.length + ' candidate images');
  const cue = el('input', { type: 'text', id: 'cue', maxlength: 40, required: true, autocomplete: 'off' });
  const result = el('div', { id: 'round-result' });
  const err = errorBox();
  const submit = el('button', { class: 'primary', type: 'submit', id: 'submit-round', text: 'Submit and see the rival' });
  const form = el('form', { on: { submit: async (ev) => {
    ev.preventDefault();
    clearError(err);
    await busy([submit], 'Asking the rival\u2026', async () => {
      try {
        const mine = grid.selected();
        const r = await api('POST', '/api/rounds/' + draft.id + '/submit', { cue: cue.value, associations: mine });
        flash('');
        const h = el('h3', { text: 'Your cue \u201c' + (r.cue || cue.value) + '\u201d: the rival picked ' + r.model_picks.length + ' image' + (r.model_picks.length === 1 ? '' : 's') });
        result.replaceChildren(h,
          el('p', { class: 'legend', text: '\u2605 your associations \u00b7 \u25ce the rival\u2019s picks' }),
          imageGrid(draft.candidates, 0, { gold: r.associations, model: r.model_picks, goldLabel: 'yours' }, 0, 'Your associations and the rival\u2019s picks'),
          el('div', { class: 'scores' },
            el('div', { id: 'model-score', text: 'Model score: ' + fmt(r.model_score) }),
            el('div', { id: 'fool-score', text: 'Fool-the-AI: ' + fmt(r.fool_the_ai) })),
          el('p', { class: 'note', id: 'score-help', text: 'Model score: how well the rival matched your associations (' +
            SCORE_HELP + ' 0 means it found none of them). Fool-the-AI = 100 \u2212 model score: the higher, the better you fooled it. ' +
            'Three other players will now solve it; if they find your images (solvable-by-humans 80 or more) and fool-the-AI is 50 or more, you earn a bonus.' }),
          el('div', { class: 'actions' },
            el('a', { href: '#solve', id: 'next-link', text: 'Now solve others\u2019 associations' }),
            el('a', { href: '#dashboard', text: 'Your dashboard' })));
        form.hidden = true;
        focusResult(h);
      } catch (e) { showError(err, e.message); }
    });
  } } },
    note ? el('p', { class: 'panel note', id: 'creator-note', text: note }) : null,
    el('p', { text: 'Select 2-5 images and write one word that links them, but that the rival will miss.' }),
    pickBlock(grid),
    el('label', { class: 'field', for: 'cue', text: 'Cue (one word, not what an image is called)' }), cue,
    submit, err);
  setView(seq, 'Spymaster', form, result);
}

async function solveView() {
  const seq = navSeq;
  let task;
  try { task = await api('POST', '/api/solve/next'); } catch (e) {
    setView(seq, 'Solve', el('p', { class: 'empty', text: e.message }),
      e.code === 'not_qualified' ? el('a', { href: '#qualify', id: 'next-link', text: 'Take the qualification test' }) : null);
    return;
  }
  if (task.id === null) {
    const text = task.message.charAt(0).toUpperCase() + task.message.slice(1);
    if (task.next === 'wait') {
      setView(seq, 'Solve', waitPanel(seq, text, () => rerun(solveView), el('a', { href: '#dashboard', text: 'Your dashboard' })));
    } else {
      setView(seq, 'Solve', el('p', { class: 'empty', id: 'nothing', text: text }),
        el('a', { href: '#create', id: 'next-link', class: 'button-link', text: 'Create an association' }));
    }
    return;
  }
  const grid = imageGrid(task.candidates, task.k, {}, 0, 'Candidate images for the cue \u201c' + task.cue + '\u201d');
  const result = el('div', { id: 'solve-result' });
  const err = errorBox();
  const reported = (r) => {
    flash(r.hidden ? 'Reported: hidden until an admin reviews it.' : 'Reported: an admin will review it; you will not be given it again.', false, true);
    rerun(solveView);
  };
  const before = reportControls(task.id, reported);
  const submit = el('button', { class: 'primary', type: 'submit', id: 'submit-solve', text: 'Submit' });
  const form = el('form', { on: { submit: async (ev) => {
    ev.preventDefault();
    clearError(err);
    await busy([submit, before.open], 'Checking\u2026', async () => {
      try {
        const picks = grid.selected();
        const r = await api('POST', '/api/solve/' + task.id, { picks });
        form.hidden = true;
        before.form.hidden = true;
        flash('');
        const after = reportControls(task.id, (x) => {
          flash(x.hidden ? 'Reported: hidden until an admin reviews it.' : 'Reported: an admin will review it.');
          after.open.hidden = true; after.form.hidden = true;
        });
        const h = el('h3', { text: 'Cue \u201c' + task.cue + '\u201d: your picks and the answer' });
        result.replaceChildren(h,
          el('div', { class: 'scores' }, el('div', { id: 'solve-score', text: 'Your score: ' + fmt(r.score) })),
          el('p', { class: 'legend', text: '\u2714 your picks \u00b7 \u2605 the right answer (the spymaster\u2019s associations)' }),
          imageGrid(task.candidates, 0, { gold: r.associations, mine: picks }, 0, 'Your picks and the answer for \u201c' + task.cue + '\u201d'),
          el('p', { class: 'note', text: 'Your score: ' + SCORE_HELP + ' 100 means you found exactly the spymaster\u2019s images.' }),
          el('div', { class: 'actions' },
            el('button', { class: 'primary', type: 'button', id: 'next-solve', text: 'Next', on: { click: () => rerun(solveView) } }),
            el('a', { href: '#create', text: 'Create an association' }), after.open),
          after.form);
        focusResult(h);
      } catch (e) { showError(err, e.message); }
    });
  } } },
    el('p', {}, el('strong', { text: 'Cue: ' }), el('span', { id: 'solve-cue', text: task.cue }),
      document.createTextNode(' \u2014 select the ' + task.k + ' images it describes.')),
    pickBlock(grid),
    submit, before.open, err);
  setView(seq, 'Solve', form, before.form, result);
}

// A table; on a phone (CSS) each row becomes a block of "header: value" lines, so nothing
// scrolls sideways. A cell is text, or a node (a button). `mark(i)` adds a class to row i.
function table(headers, rows, id, empty, mark) {
  const cell = (c, i) => {
    const td = el('td', { 'data-label': headers[i] });
    if (c instanceof Node) td.append(c); else td.textContent = String(c);
    return td;
  };
  const body = rows.length ? rows.map((r, i) => el('tr', { class: mark ? mark(i) : false }, ...r.map(cell)))
    : [el('tr', { class: 'empty-row' }, el('td', { colspan: String(headers.length), text: empty || 'Nothing yet.' }))];
  return el('div', { class: 'table-wrap' }, el('table', { id, class: 'stack' },
    el('thead', {}, el('tr', {}, ...headers.map(h => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, ...body)));
}

// Where a player's spymaster qualification stands, and what to do next, in words.
function creatorLine(c) {
  if (c.state === 'qualified') return 'Spymaster: qualified.';
  if (c.state === 'pending') {
    const w = (c.waiting || []).map(x => '\u201c' + x.cue + '\u201d ' + x.solves + ' of ' + c.solvers + ' solves' + (x.hidden ? ', reported: waits for review' : '')).join('; ');
    return 'Spymaster: qualification association being solved (' + w + ').';
  }
  if (c.state === 'failed') return 'Spymaster: last qualification attempt missed the bar (fool-the-AI ' + fmt(c.fool_the_ai) + ', solvable-by-humans ' + fmt(c.solvable_by_humans) + '): create a new association to try again.';
  return 'Spymaster: create ' + (c.needed_rounds - c.rounds) + ' qualification association' + (c.needed_rounds - c.rounds === 1 ? '' : 's') + '.';
}

async function dashboardView() {
  const seq = navSeq;
  await refreshMe();
  const me = state.me;
  if (!me) { location.hash = '#login'; return; }
  const t = me.totals;
  const reported = new Set(me.reported || []);
  const panel = el('div', { id: 'dash-report' });
  // A report button per association (own and solved), its form under the tables.
  const reportButton = (id) => {
    if (reported.has(id)) return document.createTextNode('reported');
    const c = reportControls(id, () => { flash('Reported association ' + id + ': an admin will review it.', false, true); rerun(dashboardView); });
    c.open.textContent = 'Report';
    c.open.setAttribute('aria-label', 'Report association ' + id);
    c.open.addEventListener('click', () => { panel.replaceChildren(el('h3', { text: 'Report association ' + id }), c.form); c.form.hidden = false; c.form.querySelector('textarea').focus(); });
    return c.open;
  };
  const rounds = me.rounds.map(r => [r.id, r.cue, r.state + (r.hidden ? ' (hidden)' : ''), r.associations.length + '/' + r.candidates.length,
    fmt(r.fool_the_ai), r.solves, fmt(r.solvable_by_humans), r.bonus === undefined ? '-' : r.bonus, r.removed ? '-' : reportButton(r.id)]);
  const solves = me.solves.map(x => [x.round, x.cue, fmt(x.score), reportButton(x.round)]);
  setView(seq, 'Dashboard: ' + me.name,
    el('div', { class: 'scores' },
      el('div', { id: 'dash-bonus', text: 'Bonus: ' + t.bonus.toFixed(2) }),
      el('div', { text: 'Fool-the-AI (mean): ' + fmt(t.mean_fool_the_ai) }),
      el('div', { text: 'Solvable-by-humans (mean): ' + fmt(t.mean_solvable_by_humans) }),
      el('div', { text: 'Solver score (mean): ' + fmt(t.mean_solver_score) })),
    el('p', { class: 'note', text: 'Bonus: the published game\u2019s per-association bonus (US dollars in the original crowdsourcing), earned when solvable-by-humans is 80 or more: 0.03 for fool-the-AI 50-60, 0.07 for 60-67, 0.18 for 67-80, 0.27 for 80 or more. ' + SCORE_HELP }),
    el('p', { id: 'dash-status', text: 'Solver: ' + (me.solver_qualified ? 'qualified' : 'not qualified') + '. ' + creatorLine(me.creator) }),
    el('h3', { text: 'Your associations' }),
    table(['Round', 'Cue', 'State', 'Picked / candidates', 'Fool-the-AI', 'Solves', 'Solvable by humans', 'Bonus', 'Report'], rounds, 'dash-rounds',
      'No associations yet: create one on the Spymaster page.'),
    el('h3', { text: 'Your solves' }),
    table(['Round', 'Cue', 'Score', 'Report'], solves, 'dash-solves', 'No solves yet: solve one on the Solve page.'),
    panel);
}

async function leaderboardView() {
  const seq = navSeq;
  const lb = await api('GET', '/api/leaderboard');
  const me = state.me && state.me.name;
  const who = (name) => name === me ? name + ' (you)' : name;
  const mine = (list) => (i) => list[i].name === me ? 'me' : false;
  setView(seq, 'Leaderboard',
    el('h3', { text: 'Spymasters' }),
    table(['Rank', 'Name', 'Associations', 'Fool-the-AI', 'Solvable', 'Bonus'],
      lb.spymasters.map((x, i) => [i + 1, who(x.name), x.associations, fmt(x.mean_fool_the_ai), fmt(x.mean_solvable_by_humans), x.bonus.toFixed(2)]), 'lb-spymasters',
      'No completed associations yet.', mine(lb.spymasters)),
    el('h3', { text: 'Solvers' }),
    table(['Rank', 'Name', 'Solves', 'Mean score'], lb.solvers.map((x, i) => [i + 1, who(x.name), x.solves, fmt(x.mean_score)]), 'lb-solvers', 'No solves yet.', mine(lb.solvers)),
    el('p', { class: 'note', text: 'Ranked by bonus (spymasters) and mean score (solvers). Fool-the-AI, solvable-by-humans and solver scores are means on the 0-100 scale; the bonus is summed.' }));
}

async function adminView() {
  const seq = navSeq;
  const r = await api('GET', '/api/admin/reports');
  const items = r.reports.map(p => {
    const err = errorBox();
    const act = async (action, buttons) => {
      clearError(err);
      await busy(buttons, action === 'remove' ? 'Removing\u2026' : 'Restoring\u2026', async () => {
        try {
          await api('POST', '/api/admin/reports/' + p.id, { action });
          flash(action === 'remove' ? 'Removed report ' + p.id + '\u2019s association for good.' : 'Restored report ' + p.id + '\u2019s association.', false, true);
          adminView();
        } catch (e) { showError(err, e.message); }
      });
    };
    const restore = el('button', { class: 'primary', type: 'button', text: 'Restore', on: { click: () => act('restore', [restore, remove]) } });
    const confirmBox = el('div', { class: 'confirm', role: 'alertdialog', 'aria-label': 'Confirm removal', hidden: true });
    const yes = el('button', { class: 'danger', type: 'button', text: 'Yes, remove it', on: { click: () => act('remove', [yes, no, restore]) } });
    const no = el('button', { class: 'secondary', type: 'button', text: 'Cancel', on: { click: () => { confirmBox.hidden = true; remove.hidden = false; remove.focus(); } } });
    confirmBox.append(el('p', { text: 'Remove \u201c' + p.cue + '\u201d for good? It leaves the game and the export; this cannot be undone.' }), yes, no);
    const remove = el('button', { class: 'secondary danger-outline', type: 'button', text: 'Remove\u2026', on: { click: () => {
      confirmBox.hidden = false; remove.hidden = true; no.focus();
    } } });
    return el('section', { class: 'report' },
      el('h3', { text: 'Report ' + p.id + ': "' + p.cue + '" by ' + p.creator }),
      el('p', { text: 'Reported by ' + p.reporter + ': ' + (p.reason || '(no reason)') }),
      imageGrid(p.candidates, 0, { gold: p.associations, goldLabel: 'association' }, 0, 'Report ' + p.id + ': the association\u2019s images'),
      el('div', { class: 'actions' }, restore, remove), confirmBox, err);
  });
  setView(seq, 'Review reported associations', items.length ? el('div', {}, ...items) : el('p', { class: 'empty', text: 'Nothing to review.' }));
}

const views = { login: loginView, qualify: qualifyView, create: createView, solve: solveView,
  dashboard: dashboardView, leaderboard: leaderboardView, admin: adminView };

async function route() {
  const name = location.hash.replace('#', '') || (state.me ? 'create' : 'login');
  const view = views[name] || loginView;
  ++navSeq;
  if (navSeq > (state.flashUntil || 0)) flash('');
  if (!state.me && name !== 'leaderboard') { loginView(); return; }
  for (const a of document.querySelectorAll('nav a')) {
    if (a.getAttribute('href') === '#' + name) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  try { await view(); } catch (e) { flash(e.message, true); if (e.status === 401) { await refreshMe(); loginView(); } }
}

window.addEventListener('hashchange', () => {
  state.navigated = true;
  route();
});
document.addEventListener('DOMContentLoaded', async () => {
  // A click on the link of the page already shown starts it again (a new round, the next task).
  for (const a of document.querySelectorAll('nav a[href^="#"]')) {
    a.addEventListener('click', (ev) => {
      if (a.getAttribute('href') === location.hash) { ev.preventDefault(); state.navigated = true; route(); }
    });
  }
  document.getElementById('logout').addEventListener('click', async () => {
    try { await api('POST', '/api/logout'); } catch (e) { /* already signed out */ }
    await refreshMe();
    location.hash = '#login';
  });
  try {
    state.status = await api('GET', '/api/status');
    if (state.status.rival_random_weights) {
      const note = document.getElementById('rival-note');
      note.textContent = 'The rival is a seeded random-weight model (' + state.status.rival + '), not a trained CLIP: its picks are arbitrary.';
      note.hidden = false;
    }
  } catch (e) { /* status is informative only */ }
  await refreshMe();
  route();
});
