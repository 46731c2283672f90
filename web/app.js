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
  state.keepFlash = keep && !!message;
}

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

// A grid of candidate images; `pick` = max selectable (0: display only), `min` the fewest.
// `marks` labels result cards in words and icons (not colour alone): gold (the right answer or
// your associations), model (the rival's picks), mine (your picks); `goldLabel` names gold.
function imageGrid(names, pick, marks = {}, min = 0) {
  const grid = el('div', { class: 'grid', role: 'group', 'aria-label': pick ? 'Candidate images' : 'Result' });
  const boxes = [];
  const counter = pick ? el('p', { class: 'counter', 'aria-live': 'polite' }) : null;
  const updateCounter = () => {
    if (!counter) return;
    const k = boxes.filter(b => b.checked).length;
    counter.textContent = (min && min !== pick ? k + ' selected (choose ' + min + '\u2013' + pick + ')' : k + ' of ' + pick + ' selected');
    counter.classList.toggle('done', k >= (min || pick));
  };
  for (const name of names) {
    const box = el('input', { type: 'checkbox', value: name, 'aria-label': name, hidden: pick ? false : true });
    const has = (key) => marks[key] && marks[key].includes(name);
    const badges = [];
    if (has('gold')) badges.push(el('span', { class: 'badge gold', text: '\u2605 ' + (marks.goldLabel || 'right answer') }));
    if (has('mine')) badges.push(el('span', { class: 'badge mine', text: '\u2714 your pick' }));
    if (has('model')) badges.push(el('span', { class: 'badge model', text: '\u25ce rival\u2019s pick' }));
    const card = el('label', { class: 'card' + (has('gold') ? ' gold' : '') + (has('model') ? ' model' : '') + (has('mine') ? ' mine' : '') },
      el('img', { src: '/images/' + encodeURIComponent(name), alt: name, loading: 'lazy' }),
      el('span', {}, box, document.createTextNode(name)),
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
  }
  grid.selected = () => boxes.filter(b => b.checked).map(b => b.value);
  grid.counter = counter;
  updateCounter();
  return grid;
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
      } catch (e) { showError(err, e.message); }
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
  if (q.solver_qualified) { setView(seq, 'Qualification', el('p', { text: 'You are qualified. Go and play.' })); return; }
  if (!q.instances.length) { setView(seq, 'Qualification', el('p', { text: 'This game has no qualification test.' })); return; }
  const grids = {};
  const items = q.instances.map(inst => {
    const g = imageGrid(inst.candidates, inst.k);
    grids[inst.id] = g;
    return el('section', {}, el('h3', { text: 'Cue: ' + inst.cue + ' (select ' + inst.k + ')' }), pickBlock(g));
  });
  const err = errorBox();
  const submit = el('button', { class: 'primary', type: 'button', id: 'qualify-submit', text: 'Submit the test', on: { click: async () => {
    const answers = {};
    for (const [id, g] of Object.entries(grids)) answers[id] = g.selected();
    clearError(err);
    await busy([submit], 'Checking\u2026', async () => {
      try {
        const r = await api('POST', '/api/qualification', { answers });
        await refreshMe();
        const text = (r.passed ? 'Passed' : 'Not passed') + ': mean score ' + fmt(r.score) + ' (pass mark ' + q.pass_mark + ').';
        if (r.passed) { flash(text, false, true); location.hash = '#create'; } else showError(err, text);
      } catch (e) { showError(err, e.message); }
    });
  } } });
  setView(seq, 'Qualification test', el('p', { text: 'Select the images each cue describes. Pass mark: a mean score of ' + q.pass_mark + ' (the Jaccard index of your picks and the answer, 0-100).' }), ...items, submit, err);
}

const SCORE_HELP = 'Scores run from 0 to 100: the Jaccard index between two sets of images (shared images over all images picked), times 100.';

async function createView() {
  const seq = navSeq;
  let draft;
  try { draft = await api('POST', '/api/rounds'); } catch (e) {
    setView(seq, 'Spymaster', el('p', { class: 'empty', text: e.message }),
      e.code === 'solve_first' ? el('a', { href: '#solve', text: 'Solve an association' }) : null);
    return;
  }
  const grid = imageGrid(draft.candidates, 5, {}, 2);
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
        result.replaceChildren(
          el('h3', { text: 'Your cue \u201c' + (r.cue || cue.value) + '\u201d: the rival picked ' + r.model_picks.length + ' image' + (r.model_picks.length === 1 ? '' : 's') }),
          el('p', { class: 'legend', text: '\u2605 your associations \u00b7 \u25ce the rival\u2019s picks' }),
          imageGrid(draft.candidates, 0, { gold: r.associations, model: r.model_picks, goldLabel: 'yours' }),
          el('div', { class: 'scores' },
            el('div', { id: 'model-score', text: 'Model score: ' + fmt(r.model_score) }),
            el('div', { id: 'fool-score', text: 'Fool-the-AI: ' + fmt(r.fool_the_ai) })),
          el('p', { class: 'note', id: 'score-help', text: 'Model score: how well the rival matched your associations (' +
            SCORE_HELP + ' 0 means it found none of them). Fool-the-AI = 100 \u2212 model score: the higher, the better you fooled it. ' +
            'Three other players will now solve it; if they find your images (solvable-by-humans 80 or more) and fool-the-AI is 50 or more, you earn a bonus.' }),
          el('a', { href: '#solve', text: 'Now solve others\u2019 associations' }));
        form.hidden = true;
        result.querySelector('h3').scrollIntoView({ block: 'start' });
      } catch (e) { showError(err, e.message); }
    });
  } } },
    el('p', { text: 'Select 2-5 images and write one word that links them, but that the rival will miss.' + (draft.qualification ? ' (Qualification round.)' : '') }),
    pickBlock(grid),
    el('label', { class: 'field', for: 'cue', text: 'Cue (one word, not an image\u2019s name)' }), cue,
    submit, err);
  setView(seq, 'Spymaster', form, result);
}

async function solveView() {
  const seq = navSeq;
  let task;
  try { task = await api('POST', '/api/solve/next'); } catch (e) { setView(seq, 'Solve', el('p', { class: 'empty', text: e.message })); return; }
  if (task.id === null) { setView(seq, 'Solve', el('p', { class: 'empty', text: task.message }), el('a', { href: '#create', text: 'Create an association' })); return; }
  const grid = imageGrid(task.candidates, task.k);
  const result = el('div', { id: 'solve-result' });
  const err = errorBox();
  // The in-page report form (no prompt()).
  const reason = el('textarea', { id: 'report-reason', rows: 2, maxlength: 500 });
  const reportErr = errorBox();
  const sendReport = el('button', { class: 'primary', type: 'submit', id: 'report-send', text: 'Send the report' });
  const reportForm = el('form', { id: 'report-form', class: 'panel', hidden: true, on: { submit: async (ev) => {
    ev.preventDefault();
    clearError(reportErr);
    await busy([sendReport], 'Sending\u2026', async () => {
      try {
        await api('POST', '/api/rounds/' + task.id + '/report', { reason: reason.value });
        flash('Reported: hidden until an admin reviews it.', false, true);
        solveView();
      } catch (e) { showError(reportErr, e.message); }
    });
  } } },
    el('label', { class: 'field', for: 'report-reason', text: 'Why should this association be hidden? (offensive, not a real association, ...)' }), reason,
    sendReport,
    el('button', { class: 'secondary', type: 'button', text: 'Cancel', on: { click: () => { reportForm.hidden = true; report.hidden = false; } } }),
    reportErr);
  const report = el('button', { class: 'secondary', type: 'button', id: 'report', text: 'Report this association', on: { click: () => {
    reportForm.hidden = false; report.hidden = true; reason.focus();
  } } });
  const submit = el('button', { class: 'primary', type: 'submit', id: 'submit-solve', text: 'Submit' });
  const form = el('form', { on: { submit: async (ev) => {
    ev.preventDefault();
    clearError(err);
    await busy([submit, report], 'Checking\u2026', async () => {
      try {
        const picks = grid.selected();
        const r = await api('POST', '/api/solve/' + task.id, { picks });
        form.hidden = true;
        reportForm.hidden = true;
        flash('');
        result.replaceChildren(
          el('h3', { text: 'Cue \u201c' + task.cue + '\u201d: your picks and the answer' }),
          el('div', { class: 'scores' }, el('div', { id: 'solve-score', text: 'Your score: ' + fmt(r.score) })),
          el('p', { class: 'legend', text: '\u2714 your picks \u00b7 \u2605 the right answer (the spymaster\u2019s associations)' }),
          imageGrid(task.candidates, 0, { gold: r.associations, mine: picks }),
          el('p', { class: 'note', text: 'Your score: ' + SCORE_HELP + ' 100 means you found exactly the spymaster\u2019s images.' }),
          el('button', { class: 'primary', type: 'button', id: 'next-solve', text: 'Next', on: { click: solveView } }),
          el('a', { href: '#create', text: 'Create an association' }));
        result.querySelector('h3').scrollIntoView({ block: 'start' });
      } catch (e) { showError(err, e.message); }
    });
  } } },
    el('p', {}, el('strong', { text: 'Cue: ' }), el('span', { id: 'solve-cue', text: task.cue }),
      document.createTextNode(' \u2014 select the ' + task.k + ' images it describes.')),
    pickBlock(grid),
    submit, report, err);
  setView(seq, 'Solve', form, reportForm, result);
}

function table(headers, rows, id, empty) {
  const body = rows.length ? rows.map(r => el('tr', {}, ...r.map(c => el('td', { text: String(c) }))))
    : [el('tr', { class: 'empty-row' }, el('td', { colspan: String(headers.length), text: empty || 'Nothing yet.' }))];
  return el('div', { class: 'table-wrap' }, el('table', { id },
    el('thead', {}, el('tr', {}, ...headers.map(h => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, ...body)));
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
    el('p', { class: 'note', text: 'Bonus: the published game\u2019s per-association bonus (US dollars in the original crowdsourcing), earned when solvable-by-humans is 80 or more: 0.03 for fool-the-AI 50-60, 0.07 for 60-67, 0.18 for 67-80, 0.27 for 80 or more. ' + SCORE_HELP }),
    el('p', { text: 'Solver: ' + (me.solver_qualified ? 'qualified' : 'not qualified') + '. Spymaster: ' + me.creator.state + '.' }),
    el('h3', { text: 'Your associations' }),
    table(['Round', 'Cue', 'State', 'Picked / candidates', 'Fool-the-AI', 'Solves', 'Solvable by humans', 'Bonus'], rounds, 'dash-rounds',
      'No associations yet: create one on the Spymaster page.'),
    el('h3', { text: 'Your solves' }),
    table(['Round', 'Cue', 'Score'], solves, 'dash-solves', 'No solves yet: solve one on the Solve page.'));
}

async function leaderboardView() {
  const seq = navSeq;
  const lb = await api('GET', '/api/leaderboard');
  setView(seq, 'Leaderboard',
    el('h3', { text: 'Spymasters' }),
    table(['Name', 'Associations', 'Fool-the-AI', 'Solvable', 'Bonus'],
      lb.spymasters.map(s => [s.name, s.associations, fmt(s.mean_fool_the_ai), fmt(s.mean_solvable_by_humans), s.bonus.toFixed(2)]), 'lb-spymasters',
      'No completed associations yet.'),
    el('h3', { text: 'Solvers' }),
    table(['Name', 'Solves', 'Mean score'], lb.solvers.map(s => [s.name, s.solves, fmt(s.mean_score)]), 'lb-solvers', 'No solves yet.'),
    el('p', { class: 'note', text: 'Fool-the-AI, solvable-by-humans and solver scores are means on the 0-100 scale; the bonus is summed.' }));
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
      imageGrid(p.candidates, 0, { gold: p.associations, goldLabel: 'association' }),
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
  if (!state.me && name !== 'leaderboard') { loginView(); return; }
  for (const a of document.querySelectorAll('nav a')) {
    if (a.getAttribute('href') === '#' + name) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  try { await view(); } catch (e) { flash(e.message, true); if (e.status === 401) { await refreshMe(); loginView(); } }
}

window.addEventListener('hashchange', () => {
  if (!state.keepFlash) flash(''); else state.keepFlash = false;
  state.navigated = true;
  route();
});
document.addEventListener('DOMContentLoaded', async () => {
  // A click on the link of the page already shown starts it again (a new round, the next task).
  for (const a of document.querySelectorAll('nav a[href^="#"]')) {
    a.addEventListener('click', (ev) => {
      if (a.getAttribute('href') === location.hash) { ev.preventDefault(); flash(''); state.navigated = true; route(); }
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
