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

function flash(message, isError = false) {
  const f = document.getElementById('flash');
  f.textContent = message || '';
  f.className = isError ? 'error' : '';
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
  m.replaceChildren(el('h2', { text: title }), ...nodes);
  m.focus();
}

// A grid of candidate images; `pick` = max selectable (0: display only).
function imageGrid(names, pick, marks = {}) {
  const grid = el('div', { class: 'grid', role: 'group', 'aria-label': 'Candidate images' });
  const boxes = [];
  for (const name of names) {
    const box = el('input', { type: 'checkbox', value: name, 'aria-label': name, hidden: pick ? false : true });
    const card = el('label', { class: 'card' + (marks.gold && marks.gold.includes(name) ? ' gold' : '') +
        (marks.model && marks.model.includes(name) ? ' model' : '') },
      el('img', { src: '/images/' + encodeURIComponent(name), alt: name, loading: 'lazy' }),
      el('span', {}, box, document.createTextNode(name)));
    box.addEventListener('change', () => {
      card.classList.toggle('selected', box.checked);
      if (pick && boxes.filter(b => b.checked).length > pick) { box.checked = false; card.classList.remove('selected'); flash('Select at most ' + pick + ' images.', true); }
    });
    boxes.push(box);
    grid.append(card);
  }
  grid.selected = () => boxes.filter(b => b.checked).map(b => b.value);
  return grid;
}

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
}

function loginView() {
  const seq = navSeq;
  const name = el('input', { type: 'text', id: 'name', autocomplete: 'username', required: true, minlength: 3, maxlength: 32 });
  const pass = el('input', { type: 'password', id: 'password', autocomplete: 'current-password', required: true, minlength: 8 });
  async function go(kind) {
    try {
      const r = await api('POST', '/api/' + kind, { name: name.value, password: pass.value });
      state.csrf = r.csrf;
      await refreshMe();
      flash(kind === 'register' ? 'Welcome, ' + r.user.name + '.' : 'Signed in.');
      location.hash = state.me && !state.me.solver_qualified ? '#qualify' : '#create';
    } catch (e) { flash(e.message, true); }
  }
  const form = el('form', { on: { submit: (ev) => { ev.preventDefault(); go('login'); } } },
    el('label', { class: 'field', for: 'name', text: 'Name' }), name,
    el('label', { class: 'field', for: 'password', text: 'Password (8 or more characters)' }), pass,
    el('button', { class: 'primary', type: 'submit', id: 'login-btn', text: 'Sign in' }),
    el('button', { class: 'secondary', type: 'button', id: 'register-btn', text: 'Create account', on: { click: () => go('register') } }));
  setView(seq, 'Sign in or create an account', form);
}

async function qualifyView() {
  const seq = navSeq;
  const q = await api('GET', '/api/qualification');
  if (q.solver_qualified) { setView(seq, 'Qualification', el('p', { text: 'You are qualified. Go and play.' })); return; }
  if (!q.instances.length) { setView(seq, 'Qualification', el('p', { text: 'This game has no qualification test.' })); return; }
  const grids = {};
  const items = q.instances.map(inst => {
    const g = imageGrid(inst.candidates, inst.k);
    grids[inst.id] = g;
    return el('section', {}, el('h3', { text: 'Cue: ' + inst.cue + ' (select ' + inst.k + ')' }), g);
  });
  const submit = el('button', { class: 'primary', type: 'button', id: 'qualify-submit', text: 'Submit the test', on: { click: async () => {
    const answers = {};
    for (const [id, g] of Object.entries(grids)) answers[id] = g.selected();
    try {
      const r = await api('POST', '/api/qualification', { answers });
      flash((r.passed ? 'Passed' : 'Not passed') + ': mean score ' + fmt(r.score) + ' (pass mark ' + q.pass_mark + ').', !r.passed);
      await refreshMe();
      if (r.passed) location.hash = '#create';
    } catch (e) { flash(e.message, true); }
  } } });
  setView(seq, 'Qualification test', el('p', { text: 'Select the images each cue describes. Pass mark: a mean score of ' + q.pass_mark + '.' }), ...items, submit);
}

async function createView() {
  const seq = navSeq;
  let draft;
  try { draft = await api('POST', '/api/rounds'); } catch (e) {
    setView(seq, 'Spymaster', el('p', { text: e.message }),
      e.code === 'solve_first' ? el('a', { href: '#solve', text: 'Solve an association' }) : null);
    return;
  }
  const grid = imageGrid(draft.candidates, 5);
  const cue = el('input', { type: 'text', id: 'cue', maxlength: 40, required: true, autocomplete: 'off' });
  const result = el('div', { id: 'round-result' });
  const form = el('form', { on: { submit: async (ev) => {
    ev.preventDefault();
    try {
      const r = await api('POST', '/api/rounds/' + draft.id + '/submit', { cue: cue.value, associations: grid.selected() });
      result.replaceChildren(
        el('h3', { text: 'The rival picked' }),
        imageGrid(draft.candidates, 0, { gold: r.associations, model: r.model_picks }),
        el('div', { class: 'scores' },
          el('div', { id: 'model-score', text: 'Model score: ' + fmt(r.model_score) }),
          el('div', { id: 'fool-score', text: 'Fool-the-AI: ' + fmt(r.fool_the_ai) })),
        el('p', { class: 'note', text: 'Green: your associations; red ring: the rival\u2019s picks. Three other players will now solve it.' }),
        el('a', { href: '#solve', text: 'Now solve others\u2019 associations' }));
      form.hidden = true;
    } catch (e) { flash(e.message, true); }
  } } },
    el('p', { text: 'Select 2-5 images and write one word that links them, but that the rival will miss.' + (draft.qualification ? ' (Qualification round.)' : '') }),
    grid,
    el('label', { class: 'field', for: 'cue', text: 'Cue (one word, not an image\u2019s name)' }), cue,
    el('button', { class: 'primary', type: 'submit', id: 'submit-round', text: 'Submit and see the rival' }));
  setView(seq, 'Spymaster', form, result);
}

async function solveView() {
  const seq = navSeq;
  let task;
  try { task = await api('GET', '/api/solve/next'); } catch (e) { setView(seq, 'Solve', el('p', { text: e.message })); return; }
  if (task.id === null) { setView(seq, 'Solve', el('p', { text: task.message }), el('a', { href: '#create', text: 'Create an association' })); return; }
  const grid = imageGrid(task.candidates, task.k);
  const result = el('div', { id: 'solve-result' });
  const report = el('button', { class: 'secondary', type: 'button', id: 'report', text: 'Report this association', on: { click: async () => {
    const reason = prompt('Why should it be hidden?') || '';
    try { await api('POST', '/api/rounds/' + task.id + '/report', { reason }); flash('Reported: hidden until an admin reviews it.'); solveView(); } catch (e) { flash(e.message, true); }
  } } });
  const form = el('form', { on: { submit: async (ev) => {
    ev.preventDefault();
    try {
      const r = await api('POST', '/api/solve/' + task.id, { picks: grid.selected() });
      form.hidden = true;
      result.replaceChildren(
        el('div', { class: 'scores' }, el('div', { id: 'solve-score', text: 'Your score: ' + fmt(r.score) })),
        imageGrid(task.candidates, 0, { gold: r.associations }),
        el('button', { class: 'primary', type: 'button', id: 'next-solve', text: 'Next', on: { click: solveView } }),
        el('a', { href: '#create', text: 'Create an association' }));
    } catch (e) { flash(e.message, true); }
  } } },
    el('p', {}, el('strong', { text: 'Cue: ' }), el('span', { id: 'solve-cue', text: task.cue }),
      document.createTextNode(' \u2014 select the ' + task.k + ' images it describes.')),
    grid,
    el('button', { class: 'primary', type: 'submit', id: 'submit-solve', text: 'Submit' }), report);
  setView(seq, 'Solve', form, result);
}

function table(headers, rows, id) {
  return el('div', { class: 'table-wrap' }, el('table', { id },
    el('thead', {}, el('tr', {}, ...headers.map(h => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, ...rows.map(r => el('tr', {}, ...r.map(c => el('td', { text: String(c) })))))));
}

async function dashboardView() {
  const seq = navSeq;
  await refreshMe();
  const me = state.me;
  if (!me) { location.hash = '#login'; return; }
  const t = me.totals;
  const rounds = me.rounds.map(r => [r.id, r.cue, r.state + (r.hidden ? ' (hidden)' : ''), r.associations.length + '/' + r.candidates.length,
    fmt(r.fool_the_ai), r.solves, fmt(r.solvable_by_humans), r.bonus === undefined ? '-' : r.bonus]);
  const solves = me.solves.map(s => [s.round, s.cue, fmt(s.score)]);
  setView(seq, 'Dashboard: ' + me.name,
    el('div', { class: 'scores' },
      el('div', { id: 'dash-bonus', text: 'Bonus: ' + t.bonus.toFixed(2) }),
      el('div', { text: 'Fool-the-AI (mean): ' + fmt(t.mean_fool_the_ai) }),
      el('div', { text: 'Solvable-by-humans (mean): ' + fmt(t.mean_solvable_by_humans) }),
      el('div', { text: 'Solver score (mean): ' + fmt(t.mean_solver_score) })),
    el('p', { text: 'Solver: ' + (me.solver_qualified ? 'qualified' : 'not qualified') + '. Spymaster: ' + me.creator.state + '.' }),
    el('h3', { text: 'Your associations' }),
    table(['Round', 'Cue', 'State', 'k/n', 'Fool-the-AI', 'Solves', 'Solvable', 'Bonus'], rounds, 'dash-rounds'),
    el('h3', { text: 'Your solves' }),
    table(['Round', 'Cue', 'Score'], solves, 'dash-solves'));
}

async function leaderboardView() {
  const seq = navSeq;
  const lb = await api('GET', '/api/leaderboard');
  setView(seq, 'Leaderboard',
    el('h3', { text: 'Spymasters' }),
    table(['Name', 'Associations', 'Fool-the-AI', 'Solvable', 'Bonus'],
      lb.spymasters.map(s => [s.name, s.associations, fmt(s.mean_fool_the_ai), fmt(s.mean_solvable_by_humans), s.bonus.toFixed(2)]), 'lb-spymasters'),
    el('h3', { text: 'Solvers' }),
    table(['Name', 'Solves', 'Mean score'], lb.solvers.map(s => [s.name, s.solves, fmt(s.mean_score)]), 'lb-solvers'));
}

async function adminView() {
  const seq = navSeq;
  const r = await api('GET', '/api/admin/reports');
  const items = r.reports.map(p => el('section', {},
    el('h3', { text: 'Report ' + p.id + ': "' + p.cue + '" by ' + p.creator }),
    el('p', { text: 'Reported by ' + p.reporter + ': ' + (p.reason || '(no reason)') }),
    imageGrid(p.candidates, 0, { gold: p.associations }),
    ...['restore', 'remove'].map(action => el('button', { class: action === 'remove' ? 'primary' : 'secondary', type: 'button', text: action === 'remove' ? 'Remove' : 'Restore',
      on: { click: async () => { try { await api('POST', '/api/admin/reports/' + p.id, { action }); flash('Done.'); adminView(); } catch (e) { flash(e.message, true); } } } }))));
  setView(seq, 'Review reported associations', items.length ? el('div', {}, ...items) : el('p', { text: 'Nothing to review.' }));
}

const views = { login: loginView, qualify: qualifyView, create: createView, solve: solveView,
  dashboard: dashboardView, leaderboard: leaderboardView, admin: adminView };

async function route() {
  const name = location.hash.replace('#', '') || (state.me ? 'create' : 'login');
  const view = views[name] || loginView;
  ++navSeq;
  if (!state.me && name !== 'leaderboard') { loginView(); return; }
  try { await view(); } catch (e) { flash(e.message, true); if (e.status === 401) { await refreshMe(); loginView(); } }
}

window.addEventListener('hashchange', () => { flash(''); route(); });
document.addEventListener('DOMContentLoaded', async () => {
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
