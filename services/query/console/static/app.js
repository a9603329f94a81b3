// GraphRAG console: one module, no build step. It reads only the public HTTP API
// (/openapi.json documents it) and writes every corpus text through textContent or text
// nodes, never as HTML: documents are untrusted input.

import { curationBar, entityEditor } from './curate.js';

// ---------- DOM helpers ----------

// h builds an element: attrs are properties or attributes ("on…" functions become
// listeners), children are nodes or strings (strings become text nodes, never HTML).
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'style') el.style.cssText = v; // CSSOM: allowed by the CSP, unlike a style attribute
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function clear(el) { el.replaceChildren(); return el; }

// fill replaces el's children (arrays flattened, null skipped, strings as text).
function fill(el, ...children) { return append(clear(el), children); }

const STOP = new Set(('the a an and or of to in on at by for with from as is are was were be been what which who whom ' +
  'whose when where why how did does do that this these those it its into about across over than then there their ' +
  'his her he she they them main').split(' '));

// termsOf returns the words of a question worth highlighting.
function termsOf(q) {
  return [...new Set((q || '').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 2 && !STOP.has(w)))];
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// highlight returns text as nodes, with the terms (case-insensitive) in <mark>.
function highlight(text, terms) {
  terms = (terms || []).filter(Boolean);
  if (!terms.length) return [text];
  const re = new RegExp('(' + terms.map(escapeRe).sort((a, b) => b.length - a.length).join('|') + ')', 'giu');
  return text.split(re).map((part, i) => (i % 2 ? h('mark', {}, part) : part));
}

const fmt = (x, d = 3) => (typeof x === 'number' ? (Number.isInteger(x) ? String(x) : x.toFixed(d)) : '');
const num = (x) => (typeof x === 'number' ? x.toLocaleString('en') : '–');

// ---------- API ----------

const TOKEN_KEY = 'graphrag.token';
const CORPUS_KEY = 'graphrag.corpus';

class AuthError extends Error {}
class APIError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

const state = {
  corpus: localStorage.getItem(CORPUS_KEY) || 'demo',
  authRequired: false,
};

const enc = encodeURIComponent;
const corpusPath = (rest) => `/v1/corpora/${enc(state.corpus)}${rest}`;

// api sends a request with the session's token; a 401 shows the token form.
async function api(path, opts = {}) {
  const headers = new Headers(opts.headers || {});
  const tok = sessionStorage.getItem(TOKEN_KEY);
  if (tok) headers.set('Authorization', 'Bearer ' + tok);
  const resp = await fetch(path, { ...opts, headers });
  if (resp.status === 401) {
    state.authRequired = true;
    showTokenForm(tok ? 'The token was refused.' : '');
    throw new AuthError('This API needs a bearer token: enter it above.');
  }
  if (!resp.ok) {
    let msg = resp.statusText;
    try { msg = (await resp.json()).error || msg; } catch { /* not JSON */ }
    throw new APIError(resp.status, msg);
  }
  return resp;
}

const getJSON = async (path) => (await api(path)).json();

// errorBox renders an error in place of data.
function errorBox(err) {
  if (err instanceof AuthError) return h('p', { class: 'notice auth-required' }, err.message);
  const extra = err instanceof APIError && err.status === 404 ? ' (not found)' : '';
  return h('p', { class: 'error' }, String(err.message || err) + extra);
}

function showTokenForm(msg) {
  const form = document.getElementById('token-form');
  form.hidden = false;
  form.querySelector('p').textContent = (msg ? msg + ' ' : '') +
    'This API needs a bearer token. It is kept in this tab\'s session storage only.';
  document.getElementById('token-button').hidden = false;
  document.getElementById('token').focus();
}

function setupToken() {
  const form = document.getElementById('token-form');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = document.getElementById('token').value.trim();
    if (!v) return;
    sessionStorage.setItem(TOKEN_KEY, v);
    document.getElementById('token').value = '';
    form.hidden = true;
    loadCorpora();
    route();
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    route();
  });
  document.getElementById('token-button').addEventListener('click', () => { form.hidden = !form.hidden; });
}

// ---------- corpus picker ----------

async function loadCorpora() {
  const list = document.getElementById('corpora');
  try {
    const r = await getJSON('/v1/corpora');
    clear(list);
    for (const c of r.corpora || []) list.append(h('option', { value: c.name }, `${c.name} (${c.state})`));
  } catch { /* the picker stays a free text field */ }
}

function setupCorpus() {
  const input = document.getElementById('corpus');
  input.value = state.corpus;
  input.addEventListener('change', () => {
    const v = input.value.trim();
    if (!v || v === state.corpus) return;
    state.corpus = v;
    localStorage.setItem(CORPUS_KEY, v);
    route();
  });
}

// ---------- router ----------

const pages = {};
let cleanup = null;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [name, query] = raw.split('?');
  return { name: name || 'ask', params: new URLSearchParams(query || '') };
}

function route() {
  if (cleanup) { cleanup(); cleanup = null; }
  const { name, params } = parseHash();
  const page = pages[name] || pages.ask;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.page === name);
  const main = clear(document.getElementById('main'));
  main.dataset.page = name;
  cleanup = page(main, params) || null;
}

function go(name, params) {
  const q = params ? '?' + new URLSearchParams(params).toString() : '';
  location.hash = `#/${name}${q}`;
}

// ---------- passage viewer (shared) ----------

// showPassage renders a chunk into panel, with terms highlighted.
async function showPassage(panel, chunkID, terms, heading) {
  fill(panel, h('p', { class: 'muted' }, 'Loading passage…'));
  try {
    const p = await getJSON(corpusPath(`/chunks/${enc(chunkID)}`));
    fill(panel, 
      h('h3', {}, heading || p.title || p.document_id),
      h('p', { class: 'muted' }, 'document ', h('code', {}, p.document_id), ' · chunk ', h('code', {}, p.id)),
      h('div', { class: 'passage-text', dataset: { chunk: p.id } }, highlight(p.text, terms)),
    );
  } catch (err) {
    fill(panel, errorBox(err));
  }
}

// ---------- Ask ----------

pages.ask = (main) => {
  const q = h('textarea', { id: 'question', rows: 2, placeholder: 'Ask a question about the corpus…', required: true });
  const mode = h('select', { id: 'mode' }, MODES.map(([m, title]) => h('option', { value: m, title }, m)));
  const btn = h('button', { type: 'submit', id: 'ask' }, 'Ask');
  const answer = h('div', { class: 'answer', id: 'answer', 'aria-live': 'polite' });
  const cites = h('div', { id: 'citations' });
  const why = h('div', { id: 'why' });
  const side = h('div', { class: 'panel', id: 'passage' });
  const examples = h('div', { id: 'examples', class: 'muted' });
  let ctrl = null;
  const form = h('form', {
    onsubmit: async (ev) => {
      ev.preventDefault();
      examples.remove();
      if (ctrl) ctrl.abort();
      ctrl = new AbortController();
      btn.disabled = true;
      clear(answer); clear(cites); clear(why); clear(side);
      answer.classList.add('streaming');
      const question = q.value;
      try {
        let deltas = 0;
        const resp = await ask(question, mode.value, ctrl.signal, (t) => {
          answer.append(t);
          answer.dataset.deltas = String(++deltas); // how many pieces arrived before the end
        });
        answer.classList.remove('streaming');
        answer.dataset.done = '1';
        renderAnswer(resp, question, answer, cites, why, side);
      } catch (err) {
        answer.classList.remove('streaming');
        if (err.name !== 'AbortError') answer.replaceChildren(errorBox(err));
      } finally {
        btn.disabled = false;
      }
    },
  }, h('label', { for: 'question' }, 'Question'), q, h('div', { class: 'row' }, h('label', {}, 'Mode ', mode), btn));
  main.append(h('h1', {}, 'Ask'), form, examples, h('div', { class: 'split' },
    h('section', {}, h('h2', {}, 'Answer'), answer, cites, why), h('aside', {}, side)));
  q.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); } });
  q.focus();
  exampleQuestions().then((qs) => fill(examples, 'Try: ', qs.map((text) =>
    h('button', { type: 'button', class: 'example', onclick: () => { q.value = text; form.requestSubmit(); } }, text))));
  return () => { if (ctrl) ctrl.abort(); };
};

// exampleQuestions are what an empty Ask page offers: one about the corpus as a whole,
// and one about each of the two most central entities of its largest top-level community.
async function exampleQuestions() {
  const qs = ['What are the main themes across the corpus?'];
  try {
    const stats = await getJSON(corpusPath('/stats'));
    if (stats.levels > 0) {
      const tree = await getJSON(corpusPath('/communities?level=0'));
      const top = [...tree.communities].sort((a, b) => b.members - a.members)[0];
      if (top) {
        const c = await getJSON(corpusPath(`/communities/${enc(top.id)}`));
        // Not "Who is" or "What is": an entity's type may be wrong.
        for (const m of (c.members || []).slice(0, 2)) qs.push(`What do the documents say about ${m.name}?`);
      }
    }
  } catch {
    // A corpus without communities yet: the question about the whole alone.
  }
  return qs;
}

// MODES are the query API's modes with what each answers from (README.md, "Which mode
// when"), in the order of the mode selector.
const MODES = [
  ['auto', 'local or global, decided from the question'],
  ['naive', 'the passages the dense and BM25 searches rank first, no graph'],
  ['local', 'passages, the entities they mention and their relationships'],
  ['global', 'the community reports, mapped and reduced: questions about the corpus as a whole'],
  ['hybrid', 'local, with the community reports that rank first for the question'],
  ['mix', 'hybrid, with the naive passages fused in'],
  ['drift', 'follow-up questions from the top community reports, each searched locally'],
];

// ask posts a streamed query and calls onDelta with each piece of answer text; it
// resolves with the final response (the "done" event).
async function ask(query, mode, signal, onDelta) {
  const resp = await api('/v1/query', {
    method: 'POST', signal, headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ corpus: state.corpus, query, mode, stream: true }),
  });
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let done = null;
  const handle = (block) => {
    let event = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).trimStart();
    }
    if (!data) return;
    const v = JSON.parse(data);
    if (event === 'delta') onDelta(v.text);
    else if (event === 'done') done = v;
    else if (event === 'error') throw new APIError(500, v.error);
  };
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      handle(buf.slice(0, i));
      buf = buf.slice(i + 2);
    }
  }
  if (buf.trim()) handle(buf);
  if (!done) throw new Error('the answer stream ended early');
  return done;
}

function renderAnswer(resp, question, answer, cites, why, side) {
  const terms = termsOf(question);
  const byMarker = new Map((resp.citations || []).map((c) => [c.marker, c]));
  const open = (c) => {
    if (c.chunk_id) showPassage(side, c.chunk_id, terms, `[${c.marker}]`);
    else if (c.community_id) showCommunity(side, c.community_id);
  };
  // The answer again, with its markers as links.
  clear(answer);
  for (const [i, part] of resp.answer.split(/\[(\d+)\]/).entries()) {
    const c = i % 2 ? byMarker.get(part) : null;
    if (i % 2 === 0) answer.append(part);
    else if (c) answer.append(h('a', { href: '#', class: 'cite', dataset: { marker: part, chunk: c.chunk_id || '', community: c.community_id || '' }, onclick: (ev) => { ev.preventDefault(); open(c); } }, `[${part}]`));
    else answer.append(`[${part}]`);
  }
  answer.append(h('div', { class: 'muted' }, `${resp.mode} · ${fmt(resp.timings_ms?.total, 0)} ms`));
  if (resp.follow_ups?.length) {
    answer.append(h('div', { class: 'muted', id: 'follow-ups' }, 'Follow-ups searched: ', resp.follow_ups.join(' · ')));
  }
  if (byMarker.size) {
    const label = citationLabels(resp, [...byMarker.values()]);
    cites.append(h('h3', {}, 'Citations'), h('ol', { class: 'citations' }, [...byMarker.values()].map((c) => h('li', {},
      h('a', { href: '#', class: 'cite', dataset: { marker: c.marker, chunk: c.chunk_id || '', community: c.community_id || '' }, onclick: (ev) => { ev.preventDefault(); open(c); } },
        `[${c.marker}] `, label(c))))));
  }
  why.append(whyPanel(resp, terms, side));
}

// citationLabels returns how each cited source is named so that two can be told apart:
// a passage by its document's title and its place in the document (with the document
// id when two cited documents share a title), a community report by its title.
function citationLabels(resp, cited) {
  const chunks = new Map((resp.context?.chunks || []).map((c) => [c.id, c]));
  const reports = new Map((resp.context?.communities || []).map((c) => [c.id, c]));
  const titleOf = (c) => chunks.get(c.chunk_id)?.title || c.document_id || c.chunk_id;
  const docsOf = new Map(); // title -> the cited documents with it
  for (const c of cited) {
    if (!c.chunk_id) continue;
    const t = titleOf(c);
    if (!docsOf.has(t)) docsOf.set(t, new Set());
    docsOf.get(t).add(c.document_id);
  }
  return (c) => {
    if (!c.chunk_id) return `report: ${reports.get(c.community_id)?.title || c.community_id}`;
    const t = titleOf(c);
    const pos = /:(\d+):[0-9a-f]+(@\d+)?$/.exec(c.chunk_id);
    let s = pos ? `${t} · passage ${Number(pos[1]) + 1}` : t;
    if (docsOf.get(t).size > 1) s += ` (${c.document_id})`;
    return s;
  };
}

// whyPanel explains the answer: per passage its lists and ranks and the graph path; the
// linked entities; the community reports; for global answers, the communities mapped.
function whyPanel(resp, terms, side) {
  const ctx = resp.context || {};
  const out = h('details', { class: 'panel', id: 'why-panel', open: true }, h('summary', {}, 'Why these sources'));
  if (resp.partial_answers?.length) {
    out.append(h('h3', {}, 'Communities mapped'), h('table', {},
      h('tr', {}, h('th', {}, 'community'), h('th', { class: 'num' }, 'score'), h('th', {}, 'partial answer')),
      resp.partial_answers.map((p) => h('tr', {},
        h('td', {}, h('a', { href: '#', onclick: (ev) => { ev.preventDefault(); showCommunity(side, p.community_id); } }, p.community_id)),
        h('td', { class: 'num' }, fmt(p.score, 0)), h('td', {}, p.answer)))));
  }
  if (ctx.chunks?.length) {
    out.append(h('h3', {}, 'Passages'));
    ctx.chunks.forEach((c, i) => out.append(h('div', { class: 'why-chunk' },
      h('div', {}, `#${i + 1} `, h('a', { href: '#', onclick: (ev) => { ev.preventDefault(); showPassage(side, c.id, terms); } }, c.title || c.document_id),
        h('span', { class: 'muted' }, ` · fused ${fmt(c.score, 4)}`)),
      h('div', { class: 'lists muted' }, (c.lists || []).map((l) => h('span', {}, `${l.list} #${l.rank}`))),
      c.graph_path?.length ? h('div', { class: 'path' }, 'graph path: ', c.graph_path.flatMap((k, j) => (j ? [h('span', { class: 'arrow' }, '→'), entityLink(k)] : [entityLink(k)]))) : null,
    )));
  }
  const linked = (ctx.entities || []).filter((e) => e.distance === 0);
  if (linked.length) {
    out.append(h('h3', {}, 'Linked entities'), h('ul', {}, linked.map((e) => h('li', {}, entityLink(e.key, e.name),
      h('span', { class: 'muted' }, ` ${e.type || ''} · linked by ${e.linked_by || '?'}`)))));
  }
  if (ctx.communities?.length) {
    out.append(h('h3', {}, 'Community reports used'), h('ul', {}, ctx.communities.map((c) => h('li', {},
      h('a', { href: '#', onclick: (ev) => { ev.preventDefault(); showCommunity(side, c.id); } }, c.title || c.id),
      h('span', { class: 'muted' }, ` · C${c.level} · rating ${fmt(c.rating, 1)} · score ${fmt(c.score, 3)}`)))));
  }
  return out;
}

const entityLink = (key, name) => h('a', { href: `#/explore?entity=${enc(key)}` }, name || key);

// ---------- Explore ----------

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f',
  '#bab0ac', '#1f77b4', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22'];
const MAX_NODES = 2000;

function colourOf(id) {
  if (!id) return '#c8ccd0';
  let x = 0;
  for (const ch of id) x = (x * 31 + ch.codePointAt(0)) >>> 0;
  return PALETTE[x % PALETTE.length];
}

pages.explore = (main, params) => {
  const st = { cy: null, level: Number(params.get('level') || 0), levels: 1, maxPR: 1e-9, expanded: new Set(), showTitles: params.get('titles') === '1' };
  const input = h('input', { id: 'entity-search', type: 'search', placeholder: 'Entity name…', autocomplete: 'off', value: params.get('entity') || '' });
  const sugg = h('ul', { id: 'suggestions', hidden: true, role: 'listbox' });
  const depth = h('select', { id: 'depth' }, [1, 2, 3].map((d) => h('option', { value: d, selected: String(d) === (params.get('depth') || '1') }, `depth ${d}`)));
  const want = Math.min(MAX_NODES, Number(params.get('limit')) || 500);
  const sizes = [...new Set([100, 500, MAX_NODES, want])].sort((a, b) => a - b);
  const limit = h('select', { id: 'limit' }, sizes.map((n) => h('option', { value: n, selected: n === want }, `≤ ${n} neighbours`)));
  const level = h('select', { id: 'level' }, h('option', { value: st.level }, `colour: C${st.level}`));
  const status = h('div', { class: 'graph-status', id: 'graph-status' });
  const graph = h('div', { id: 'graph' });
  const details = h('div', { class: 'panel', id: 'details' });
  // Document-title nodes (see titleNodes) are hidden unless this is checked.
  const titles = h('input', { type: 'checkbox', id: 'show-titles', checked: st.showTitles });
  const show = (name) => go('explore', { entity: name, depth: depth.value, limit: limit.value, level: st.level, ...(titles.checked ? { titles: 1 } : {}) });
  st.cur = curationBar(curationUI()); // curate.js: merge the selected nodes, the log

  let timer = null;
  let seq = 0;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const n = ++seq;
      const prefix = input.value.trim();
      if (!prefix) { sugg.hidden = true; return; }
      try {
        const r = await getJSON(corpusPath(`/entities?prefix=${enc(prefix)}&limit=10`));
        if (n !== seq) return;
        fill(sugg, ...r.entities.map((e) => h('li', {}, h('button', { type: 'button', onclick: () => { sugg.hidden = true; show(e.key); } },
          e.name, h('span', { class: 'muted' }, ` ${e.type} · ${e.mentions} mentions`)))));
        sugg.hidden = r.entities.length === 0;
      } catch (err) {
        fill(sugg, h('li', {}, errorBox(err)));
        sugg.hidden = false;
      }
    }, 120);
  });
  const form = h('form', { class: 'row', onsubmit: (ev) => { ev.preventDefault(); sugg.hidden = true; if (input.value.trim()) show(input.value.trim()); } },
    h('div', { class: 'typeahead' }, input, sugg), depth, limit, level,
    h('label', { title: 'Entities named like a document and mentioned only in it' }, titles, ' document titles'), h('button', { type: 'submit' }, 'Show'));
  level.addEventListener('change', () => { st.level = Number(level.value); recolour(st); });
  titles.addEventListener('change', () => { if (params.get('entity')) show(params.get('entity')); });
  main.append(h('h1', {}, 'Graph explorer'), form, h('div', { class: 'split' },
    h('section', { class: 'graph-wrap' }, status, st.cur.el, graph, h('div', { class: 'legend', id: 'legend' })),
    h('aside', {}, details, st.cur.log)));

  getJSON(corpusPath('/stats')).then((s) => {
    st.levels = Math.max(1, s.levels || 1);
    fill(level, ...Array.from({ length: st.levels }, (_, i) => h('option', { value: i, selected: i === st.level }, `colour: C${i}`)));
  }).catch(() => {});

  const entity = params.get('entity');
  if (!entity) {
    status.append('Search an entity to see its neighbourhood; click a node to expand it and read its passages, an edge for its evidence.');
    input.focus();
  } else {
    loadNeighbourhood(st, graph, status, details, entity, Number(depth.value), Number(limit.value));
  }
  return () => { clearTimeout(timer); if (st.cy) st.cy.destroy(); };
};

// curationUI hands curate.js the helpers it builds with.
const curationUI = () => ({ h, api, getJSON, corpusPath, errorBox });

function nodeData(e, dist) {
  return { id: e.key, name: e.name || e.key, type: e.type, pr: e.pagerank || 0, mentions: e.mentions || 0, comms: e.communities || [], dist };
}

const edgeID = (r) => `${r.source}\u0000${r.target}\u0000${r.type}`;

function edgeData(r) {
  return { id: edgeID(r), source: r.source, target: r.target, type: r.type, description: r.description, weight: r.weight, evidence: r.evidence || [] };
}

async function loadNeighbourhood(st, graph, status, details, name, depth, limit) {
  const t0 = performance.now();
  fill(status, 'Loading…');
  const titles = !st.showTitles && !st.titles ? titleNodes() : null; // read alongside
  let nb;
  try {
    nb = await getJSON(corpusPath(`/entities/${enc(name)}?depth=${depth}&limit=${limit}`));
  } catch (err) {
    fill(status, errorBox(err));
    return;
  }
  if (titles) st.titles = await titles;
  const t1 = performance.now();
  if (typeof cytoscape !== 'function') { fill(status, h('p', { class: 'error' }, 'The graph library did not load.')); return; }
  // The start entity is drawn whatever it is; document titles around it are not.
  const found = [nodeData(nb.entity, 0), ...nb.neighbors.map((e) => nodeData(e, e.distance))];
  const nodes = found.filter((n, i) => i === 0 || !isTitleNode(st, n));
  const hiddenTitles = found.length - nodes.length;
  const ids = new Set(nodes.map((n) => n.id));
  const all = nb.relationships.filter((r) => ids.has(r.source) && ids.has(r.target));
  const edges = st.allEdges ? all.map(edgeData) : strongestEdges(all, nb.entity.key, nodes.length).map(edgeData);
  // Drawn when edges were left out: how many, and a way to draw them all.
  const more = [edges.length < all.length
    ? h('span', { id: 'edges-capped' }, ` Showing ${edges.length} of ${all.length} relationships (the entity's own and the strongest). `,
      h('button', { type: 'button', id: 'show-all-edges', onclick: () => { st.allEdges = true; st.cy.destroy(); loadNeighbourhood(st, graph, status, details, name, depth, limit); } }, 'Show all'))
    : null,
  hiddenTitles ? h('span', { id: 'titles-hidden' }, ` ${hiddenTitles} document-title ${hiddenTitles === 1 ? 'node' : 'nodes'} hidden.`) : null];
  const big = nodes.length > 150;
  paint(nodes, st.level);
  const rings = big ? ringPositions(nodes, st.level) : null;
  // The rings are fitted here, so that the first style is already the one for the zoom
  // labels are placed at (placeLabels): restyling 2,000 nodes costs a second pass.
  const view = rings ? fitView(rings, nodes, graph, 20) : { zoom: 1 };
  st.labelZoom = view.zoom;
  st.cy = cytoscape({
    container: graph,
    // Built without labels: placeLabels gives them to the nodes that have room, so the
    // others' names are never measured or styled.
    elements: { nodes: nodes.map((data) => ({ data, position: rings?.get(data.id), classes: 'nolabel' })), edges: edges.map((data) => ({ data })) },
    style: graphStyle(view.zoom),
    // Large neighbourhoods: rings by hop distance, computed here in one pass (a force
    // layout or Cytoscape's concentric one costs seconds at 2,000 nodes).
    layout: big
      ? { name: 'preset', fit: false }
      : { name: 'cose', animate: false, randomize: false, nodeRepulsion: () => 9000, idealEdgeLength: () => 70, numIter: 600 },
    zoom: view.zoom, pan: view.pan,
    minZoom: 0.05, maxZoom: 4, wheelSensitivity: 0.3, pixelRatio: 1,
    textureOnViewport: big, hideEdgesOnViewport: big, motionBlur: false,
  });
  st.cy.$id(nb.entity.key).addClass('start');
  st.expanded = new Set([nb.entity.key]);
  recolour(st);
  st.cy.on('tap', 'node', (ev) => { selectNode(st, ev.target, details, status); });
  st.cy.on('tap', 'edge', (ev) => { showEdge(st, ev.target, details); });
  st.cur?.attach(st.cy);
  labelsFollow(st);
  window.graphrag = { cy: st.cy };
  // Time to first render: the request, the layout and the first frame drawn.
  st.cy.one('render', () => requestAnimationFrame(() => {
    const t2 = performance.now();
    graph.dataset.renderMs = (t2 - t0).toFixed(1);
    graph.dataset.fetchMs = (t1 - t0).toFixed(1);
    graph.dataset.nodes = String(st.cy.nodes().length);
    updateStatus(st, status, `${nb.entity.name}: depth ${depth}, drawn in ${Math.round(t2 - t0)} ms.`, more);
  }));
  updateStatus(st, status, `${nb.entity.name}: depth ${depth}.`, more);
  selectNode(st, st.cy.$id(nb.entity.key), details, status, false);
}

// paint sets each node's colour (community at level) and size (PageRank) before the
// graph is built, so the first frame needs no second style pass.
function paint(nodes, level) {
  const maxPR = Math.max(1e-9, ...nodes.map((n) => n.pr));
  for (const n of nodes) {
    n.color = colourOf(n.comms[level] || '');
    n.size = 10 + 34 * Math.sqrt(n.pr / maxPR);
  }
}

// ringPositions places nodes in one band per hop distance around the start, each band
// as many rings deep as its nodes need, in angle order by community so that colours
// cluster.
function ringPositions(nodes, level) {
  const byDist = new Map();
  for (const n of nodes) {
    if (!byDist.has(n.dist)) byDist.set(n.dist, []);
    byDist.get(n.dist).push(n);
  }
  const pos = new Map();
  const gap = 26;
  let outer = 0;
  for (const d of [...byDist.keys()].sort((a, b) => a - b)) {
    const band = byDist.get(d);
    band.sort((a, b) => (a.comms[level] || '').localeCompare(b.comms[level] || '') || b.pr - a.pr);
    if (d === 0 && band.length === 1) {
      pos.set(band[0].id, { x: 0, y: 0 });
      continue;
    }
    const inner = outer + 90;
    const depth = Math.ceil(band.length / Math.max(1, Math.floor((2 * Math.PI * inner) / gap)));
    band.forEach((n, i) => {
      const a = (2 * Math.PI * i) / band.length;
      const r = inner + (i % depth) * gap;
      pos.set(n.id, { x: r * Math.cos(a), y: r * Math.sin(a) });
    });
    outer = inner + (depth - 1) * gap;
  }
  return pos;
}

// fitView is the zoom and pan that fit the nodes at positions pos in the container with
// padding pad (pixels), as Cytoscape's fit would.
function fitView(pos, nodes, container, pad) {
  let x1 = Infinity, y1 = Infinity, x2 = -Infinity, y2 = -Infinity;
  for (const n of nodes) {
    const p = pos.get(n.id);
    const r = n.size / 2;
    x1 = Math.min(x1, p.x - r); x2 = Math.max(x2, p.x + r);
    y1 = Math.min(y1, p.y - r); y2 = Math.max(y2, p.y + r);
  }
  const w = container.clientWidth, h = container.clientHeight;
  const zoom = Math.min(4, Math.max(0.05, Math.min((w - 2 * pad) / Math.max(1, x2 - x1), (h - 2 * pad) / Math.max(1, y2 - y1))));
  return { zoom, pan: { x: (w - zoom * (x1 + x2)) / 2, y: (h - zoom * (y1 + y2)) / 2 } };
}

// titleNodes returns the corpus's documents by title (lower case) with their number of
// passages, for isTitleNode.
async function titleNodes() {
  const byTitle = new Map();
  try {
    for (const d of await allDocuments()) if (d.title) byTitle.set(d.title.toLowerCase(), Math.max(byTitle.get(d.title.toLowerCase()) || 0, d.chunks || 0));
  } catch {
    // Without the list nothing is hidden; the graph still draws.
  }
  return byTitle;
}

// isTitleNode reports whether a node is a document's title more than an entity: named
// as a document is and mentioned in no more passages than that document has, i.e. only
// in its own ("Gullhead Lighthouse and the Fenwick Family"). Such a node links to
// everything its document names and turns a neighbourhood into a hairball; an entity
// other documents mention ("Marrow Bay Marine Institute") is kept.
function isTitleNode(st, n) {
  if (st.showTitles || !st.titles) return false;
  const chunks = st.titles.get((n.name || '').toLowerCase());
  return chunks !== undefined && n.mentions <= chunks;
}

// LABEL_PX is a label's height on screen whatever the zoom, as on a map: zooming in
// spreads the nodes, not their labels, and so makes room for more of them.
const LABEL_PX = 12;
const LABEL_FONT = 'Helvetica, Arial, sans-serif';
const LABEL_PAD = 4; // screen pixels kept free around a label, its outline (2) included

let measureCtx = null;
const labelWidths = new Map();

// labelWidth is a name's width in screen pixels at LABEL_PX.
function labelWidth(name) {
  let w = labelWidths.get(name);
  if (w === undefined) {
    measureCtx ||= document.createElement('canvas').getContext('2d');
    measureCtx.font = `${LABEL_PX}px ${LABEL_FONT}`;
    w = measureCtx.measureText(name).width;
    labelWidths.set(name, w);
  }
  return w;
}

// placeLabels avoids label collisions: it keeps a node's label only where neither the
// label (below the node, else above it) nor the node overlaps a label or a labelled
// node kept already, taking the nodes by importance (the start entity, the selected
// one, then by PageRank), so a dense neighbourhood shows the names of its hubs and
// hides the rest, which hovering or zooming in shows. Labelled nodes are drawn above the
// others, so no unlabelled node covers a label. Labels keep LABEL_PX on screen (their
// model size is set from the zoom). Greedy over a grid of cells a label high: linear in
// the nodes.
function placeLabels(st) {
  const cy = st.cy;
  if (!cy || cy.destroyed()) return;
  const t0 = performance.now();
  const z = cy.zoom();
  const cell = (LABEL_PX + 2 * LABEL_PAD) / z;
  const grid = new Map();
  const rank = (n) => (n.hasClass('start') ? 2 : 0) + (n.selected() ? 4 : 0);
  const nodes = cy.nodes().toArray().sort((a, b) => rank(b) - rank(a) || b.data('pr') - a.data('pr'));
  const hidden = [];
  const under = [];
  const over = [];
  for (const n of nodes) {
    const p = n.position();
    const r = n.data('size') / 2;
    const half = (labelWidth(n.data('name')) / 2 + LABEL_PAD) / z;
    const high = (1.25 * LABEL_PX + 2 * LABEL_PAD) / z;
    const below = p.y + r + (2 - LABEL_PAD) / z;
    const above = p.y - r - (2 - LABEL_PAD) / z - high;
    const disc = { x1: p.x - r, x2: p.x + r, y1: p.y - r, y2: p.y + r };
    // Below the node, else above it.
    const place = free(grid, cell, disc) && [below, above].map((y1) => ({ x1: p.x - half, x2: p.x + half, y1, y2: y1 + high })).find((b) => free(grid, cell, b));
    if (place) {
      (place.y1 === below ? under : over).push(n);
      occupy(grid, cell, place);
      occupy(grid, cell, disc);
    } else {
      hidden.push(n);
    }
  }
  if (st.labelZoom !== z) cy.style(graphStyle(z));
  st.labelZoom = z;
  cy.batch(() => {
    for (const n of hidden) n.addClass('nolabel').removeClass('label-above');
    for (const n of under) n.removeClass('nolabel label-above');
    for (const n of over) n.removeClass('nolabel').addClass('label-above');
  });
  cy.container().dataset.labels = String(under.length + over.length);
  cy.container().dataset.labelMs = (performance.now() - t0).toFixed(1);
}

// cellsOf are the keys of the grid cells box b covers.
function cellsOf(cell, b) {
  const keys = [];
  for (let i = Math.floor(b.x1 / cell); i <= Math.floor(b.x2 / cell); i++) {
    for (let j = Math.floor(b.y1 / cell); j <= Math.floor(b.y2 / cell); j++) keys.push(`${i},${j}`);
  }
  return keys;
}

// free reports whether box b overlaps no box of the grid.
function free(grid, cell, b) {
  return !cellsOf(cell, b).some((k) => (grid.get(k) || []).some((o) => o.x1 < b.x2 && b.x1 < o.x2 && o.y1 < b.y2 && b.y1 < o.y2));
}

function occupy(grid, cell, b) {
  for (const k of cellsOf(cell, b)) {
    if (!grid.has(k)) grid.set(k, []);
    grid.get(k).push(b);
  }
}

// labelsFollow places the labels now and again after a zoom, a drag or a selection
// (the zoom settled first: a wheel sends dozens of events).
function labelsFollow(st) {
  let timer = null;
  const later = () => { clearTimeout(timer); timer = setTimeout(() => placeLabels(st), 120); };
  st.cy.on('zoom', later);
  st.cy.on('dragfree select', 'node', later);
  st.cy.on('mouseover', 'node', (ev) => ev.target.addClass('hover'));
  st.cy.on('mouseout', 'node', (ev) => ev.target.removeClass('hover'));
  placeLabels(st);
}

// graphStyle is the explorer's stylesheet at zoom z (labels keep LABEL_PX on screen).
function graphStyle(z = 1) {
  return [
    { selector: 'node', style: {
      width: 'data(size)', height: 'data(size)', 'background-color': 'data(color)', label: 'data(name)',
      'font-size': LABEL_PX / z, 'font-family': LABEL_FONT, 'text-valign': 'bottom', 'text-margin-y': 2 / z, color: '#1d232a',
      'text-outline-color': '#fff', 'text-outline-width': 2 / z, 'border-width': 0.5, 'border-color': '#fff', 'z-index': 1 } },
    { selector: 'node.label-above', style: { 'text-valign': 'top', 'text-margin-y': -2 / z } },
    { selector: 'node.nolabel', style: { label: '', 'z-index': 0 } },
    { selector: 'node.nolabel.hover, node.nolabel:selected', style: { label: 'data(name)', 'z-index': 10 } },
    { selector: 'edge', style: { width: 1, 'line-color': '#b9c0c7', 'curve-style': 'haystack', 'haystack-radius': 0, opacity: 0.8 } },
    { selector: 'node.start', style: { 'border-width': 3, 'border-color': '#1d232a' } },
    { selector: 'node.expanded', style: { 'border-width': 2, 'border-color': '#5d6873' } },
    { selector: 'node:selected', style: { 'border-width': 4, 'border-color': '#b3261e' } },
    { selector: 'edge:selected', style: { width: 3, 'line-color': '#b3261e', opacity: 1 } },
  ];
}

// recolour sizes nodes by PageRank and colours them by community at the chosen level.
function recolour(st) {
  if (!st.cy) return;
  let maxPR = 1e-9;
  st.cy.nodes().forEach((n) => { maxPR = Math.max(maxPR, n.data('pr')); });
  const seen = new Map();
  const central = new Map(); // community -> its drawn node of highest PageRank, which names it
  st.cy.batch(() => st.cy.nodes().forEach((n) => {
    const c = n.data('comms')[st.level] || '';
    seen.set(c, (seen.get(c) || 0) + 1);
    if (!central.has(c) || n.data('pr') > central.get(c).data('pr')) central.set(c, n);
    n.data({ color: colourOf(c), size: 10 + 34 * Math.sqrt(n.data('pr') / maxPR) });
  }));
  const legend = document.getElementById('legend');
  if (legend) {
    const top = [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
    fill(legend, h('span', { class: 'muted' }, `C${st.level}:`), top.map(([c, n]) => h('span', {},
      h('span', { class: 'swatch', style: `background:${colourOf(c)}` }),
      c ? h('a', { href: `#/communities?open=${enc(c)}`, title: `community ${c}`, class: 'community-name' }, `around ${central.get(c).data('name')}`) : 'none', ` (${n})`)));
  }
}

function updateStatus(st, status, msg, more) {
  fill(status, msg, ` ${st.cy.nodes().length} nodes, ${st.cy.edges().length} edges.`, more);
}

// EDGES_PER_NODE bounds the edges first drawn: a busy depth 1 of 70 nodes had 985
// among them, a hairball where no edge can be followed.
const EDGES_PER_NODE = 2;

// strongestEdges keeps every relationship of the start entity and then the strongest
// others (the API sends them strongest first), up to EDGES_PER_NODE per node.
function strongestEdges(rels, start, nodes) {
  const cap = Math.max(60, EDGES_PER_NODE * nodes);
  if (rels.length <= cap) return rels;
  const own = rels.filter((r) => r.source === start || r.target === start);
  const others = rels.filter((r) => r.source !== start && r.target !== start);
  return [...own, ...others.slice(0, Math.max(0, cap - own.length))];
}

// selectNode shows a node's details and, on a click, adds its neighbours (depth 1).
async function selectNode(st, node, details, status, expand = true) {
  node.select();
  const d = node.data();
  fill(details, h('h3', {}, d.name), h('p', { class: 'muted' }, `${d.type || 'entity'} · PageRank ${fmt(d.pr, 4)} · ${d.mentions} mentions`),
    h('p', { class: 'muted' }, 'communities: ', d.comms.map((c, i) => (c ? [h('a', { href: `#/communities?open=${enc(c)}` }, `C${i}`), ' '] : null))),
    entityEditor(curationUI(), d, () => st.cur?.refresh()));
  if (expand && !st.expanded.has(d.id)) expandNode(st, node, status);
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading passages…'));
  details.append(body);
  try {
    const r = await getJSON(corpusPath(`/entities/${enc(d.id)}/passages?limit=10`));
    fill(body, 
      h('h3', {}, 'Descriptions'), h('ul', { class: 'descriptions' }, (r.entity.descriptions?.length ? r.entity.descriptions : [r.entity.description || '—']).map((x) => h('li', {}, x))),
      h('h3', {}, `Passages (${r.passages.length} of ${d.mentions})`),
      r.passages.map((p) => h('div', { class: 'why-chunk' }, h('div', { class: 'muted' }, p.title || p.document_id),
        h('div', { class: 'passage-text' }, highlight(p.text, [d.name])))));
  } catch (err) {
    fill(body, errorBox(err));
  }
}

async function expandNode(st, node, status) {
  const id = node.id();
  st.expanded.add(id);
  node.addClass('expanded');
  let nb;
  try {
    nb = await getJSON(corpusPath(`/entities/${enc(id)}?depth=1&limit=100`));
  } catch (err) {
    fill(status, errorBox(err));
    return;
  }
  const room = Math.max(0, MAX_NODES - st.cy.nodes().length);
  const unseen = nb.neighbors.filter((e) => st.cy.$id(e.key).empty() && !isTitleNode(st, nodeData(e)));
  const fresh = unseen.slice(0, room);
  const p = node.position();
  const r = 60 + 4 * fresh.length;
  const add = fresh.map((e, i) => ({ group: 'nodes', data: nodeData(e, node.data('dist') + 1), classes: 'nolabel',
    position: { x: p.x + r * Math.cos((2 * Math.PI * i) / fresh.length), y: p.y + r * Math.sin((2 * Math.PI * i) / fresh.length) } }));
  st.cy.add(add);
  const edges = nb.relationships.filter((e) => st.cy.$id(edgeID(e)).empty() && !st.cy.$id(e.source).empty() && !st.cy.$id(e.target).empty());
  st.cy.add(edges.map((e) => ({ group: 'edges', data: edgeData(e) })));
  recolour(st);
  placeLabels(st);
  const capped = fresh.length < unseen.length;
  updateStatus(st, status, `Expanded ${node.data('name')}: +${fresh.length} nodes.${capped ? ` Capped at ${MAX_NODES} nodes.` : ''}`);
}

async function showEdge(st, edge, details) {
  const d = edge.data();
  const src = st.cy.$id(d.source).data('name');
  const dst = st.cy.$id(d.target).data('name');
  const list = h('div', {});
  fill(details, h('h3', {}, `${src} — ${d.type} → ${dst}`), h('p', {}, d.description || ''),
    h('p', { class: 'muted' }, `weight ${fmt(d.weight, 2)} · ${d.evidence.length} evidence passages`), list);
  for (const id of d.evidence) {
    const box = h('div', { class: 'why-chunk' });
    list.append(box);
    showPassage(box, id, [src, dst]);
  }
}

// ---------- Communities ----------

pages.communities = (main, params) => {
  const tree = h('div', { class: 'tree', id: 'tree' }, h('p', { class: 'muted' }, 'Loading…'));
  const report = h('div', { class: 'panel', id: 'report' });
  main.append(h('h1', {}, 'Communities'), h('div', { class: 'split' }, h('section', {}, tree), h('aside', {}, report)));
  (async () => {
    let r;
    try {
      r = await getJSON(corpusPath('/communities'));
    } catch (err) {
      fill(tree, errorBox(err));
      return;
    }
    const byID = new Map(r.communities.map((c) => [c.id, c]));
    const roots = r.communities.filter((c) => !c.parent || !byID.has(c.parent));
    roots.sort((a, b) => a.level - b.level || b.members - a.members);
    fill(tree, h('p', { class: 'muted' }, `${r.levels} levels (C0 coarsest … C${Math.max(0, r.levels - 1)} finest), ${r.communities.length} communities.`),
      roots.map((c) => communityNode(c, byID, report)));
    if (!r.communities.length) tree.append(h('p', {}, 'No communities yet: detection runs after indexing.'));
    if (params.get('open')) showCommunity(report, params.get('open'));
  })();
};

// communityNode renders one community; its children are rendered when it is opened.
function communityNode(c, byID, report) {
  const label = [h('span', { class: 'badge' }, `C${c.level}`), ' ',
    h('a', { href: '#', class: 'community', dataset: { id: c.id }, onclick: (ev) => { ev.preventDefault(); showCommunity(report, c.id); } }, c.title || c.id),
    h('span', { class: 'muted' }, ` · ${c.members} members${c.title ? ` · rating ${fmt(c.rating, 1)}` : ' · no report yet'}`)];
  const kids = (c.children || []).map((id) => byID.get(id)).filter(Boolean);
  if (!kids.length) return h('div', { class: 'leaf' }, label);
  const el = h('details', {}, h('summary', {}, label));
  el.addEventListener('toggle', () => {
    if (el.open && el.children.length === 1) {
      kids.sort((a, b) => b.members - a.members);
      el.append(...kids.map((k) => communityNode(k, byID, report)));
    }
  });
  return el;
}

async function showCommunity(panel, id) {
  fill(panel, h('p', { class: 'muted' }, 'Loading report…'));
  try {
    const c = await getJSON(corpusPath(`/communities/${enc(id)}`));
    fill(panel, 
      h('h3', { id: 'report-title' }, c.title || `Community ${c.id}`),
      h('p', { class: 'muted' }, `C${c.level} · ${c.member_count} members · rating ${fmt(c.rating, 1)} · `, h('code', {}, c.id)),
      c.summary ? h('p', {}, c.summary) : h('p', { class: 'muted' }, 'The report is not written yet.'),
      c.findings.length ? [h('h3', {}, 'Findings'), h('ul', {}, c.findings.map((f) => h('li', {}, h('b', {}, f.summary), f.explanation ? [': ', f.explanation] : null)))] : null,
      h('h3', {}, 'Members'),
      h('ul', { class: 'members', id: 'members' }, c.members.map((m) => h('li', {}, entityLink(m.key, m.name), h('span', { class: 'muted' }, ` ${m.type}`)))),
    );
  } catch (err) {
    fill(panel, errorBox(err));
  }
}

// ---------- Dashboard ----------

// The pipeline's stages in their order (pkg/pipeline: StageChunker …), whatever order
// the status lists them in.
const STAGES = ['chunker', 'extractor', 'grapher', 'summarizer'];

pages.dashboard = (main) => {
  const body = h('div', { id: 'dashboard' }, h('p', { class: 'muted' }, 'Loading…'));
  main.append(h('h1', {}, 'Corpus dashboard'), body);
  let stop = false;
  let timer = null;
  const tick = async () => {
    try {
      const [s, stats] = await Promise.all([getJSON(corpusPath('/status')), getJSON(corpusPath('/stats')).catch(() => null)]);
      if (stop) return;
      renderStatus(body, s, stats);
      timer = setTimeout(tick, s.state === 'indexing' ? 1000 : 3000);
    } catch (err) {
      if (stop) return;
      fill(body, errorBox(err));
      if (!(err instanceof AuthError)) timer = setTimeout(tick, 3000);
    }
  };
  tick();
  return () => { stop = true; clearTimeout(timer); };
};

// stageBar is a stage's progress; while an earlier stage still has work, its total is
// not known yet (more will come), so the bar moves without a value instead of looking
// full.
function stageBar(st, earlier) {
  if (earlier.some((e) => e.pending > 0 || e.in_flight > 0)) {
    return h('progress', { class: 'waiting', title: 'more will come from the stages before' });
  }
  return h('progress', { max: Math.max(1, st.total), value: st.done });
}

function renderStatus(body, s, stats) {
  const stages = [...(s.stages || [])].sort((a, b) => STAGES.indexOf(a.stage) - STAGES.indexOf(b.stage));
  const llm = s.llm || {};
  const det = s.detection || {};
  fill(body, 
    h('p', {}, 'Corpus ', h('b', {}, s.corpus), ' ', h('span', { class: `badge ${s.state}`, id: 'corpus-state' }, s.state),
      h('span', { class: 'muted' }, ` · updated ${new Date().toLocaleTimeString()}`)),
    h('div', { class: 'cards' },
      stats ? [card('chunks', stats.chunks), card('entities', stats.entities), card('relationships', stats.relationships), card('communities', stats.communities)] : null,
      card('LLM calls', llm.calls), card('prompt tokens', llm.prompt_tokens), card('completion tokens', llm.completion_tokens)),
    h('h2', {}, 'Stages'),
    h('table', { class: 'wide', id: 'stages' },
      h('tr', {}, h('th', {}, 'stage'), h('th', {}, 'progress'), h('th', { class: 'num' }, 'done'), h('th', { class: 'num' }, 'total'),
        h('th', { class: 'num' }, 'pending'), h('th', { class: 'num' }, 'in flight'), h('th', { class: 'num' }, 'dead-lettered'),
        h('th', { class: 'num', title: 'messages per second over the last minute' }, 'rate/s'), h('th', { class: 'num', title: 'time left at that rate' }, 'ETA')),
      stages.map((st, i) => h('tr', { dataset: { stage: st.stage } }, h('td', {}, st.stage),
        h('td', {}, stageBar(st, stages.slice(0, i))), h('td', { class: 'num' }, num(st.done)),
        h('td', { class: 'num' }, num(st.total)), h('td', { class: 'num' }, num(st.pending)), h('td', { class: 'num' }, num(st.in_flight)),
        h('td', { class: 'num' }, num(st.dead_lettered)),
        h('td', { class: 'num rate' }, rate(st.rate)), h('td', { class: 'num eta' }, eta(st))))),
    h('h2', {}, 'Community detection'),
    h('p', {}, `${num(det.runs)} ${det.runs === 1 ? 'run' : 'runs'} · ${num(det.levels)} ${det.levels === 1 ? 'level' : 'levels'} · last run ${det.last_run || 'never'}${det.current === false ? ' · changes pending' : det.current ? ' · current' : ''}`),
    det.failing
      ? h('p', { class: 'notice', id: 'detection-failing', role: 'alert' }, det.failing, det.next_retry ? ` · next try ${det.next_retry}` : '')
      : null,
    s.quarantined
      ? [h('h2', {}, 'Quarantined records'),
        h('p', { class: 'muted' }, `${num(s.quarantined)} records a store refused as invalid, left out; the corpus goes on without them.`),
        h('table', { id: 'quarantined' }, h('tr', {}, h('th', {}, 'stage'), h('th', {}, 'record'), h('th', {}, 'reason')),
          (s.quarantined_records || []).map((q) => h('tr', {}, h('td', {}, q.stage), h('td', {}, q.id), h('td', {}, q.reason))))]
      : null,
    h('h2', {}, 'Dead letters'),
    s.dead_letters?.length
      ? h('table', { id: 'dead-letters' }, h('tr', {}, h('th', {}, 'stage'), h('th', {}, 'reason'), h('th', { class: 'num' }, 'count')),
        s.dead_letters.map((d) => h('tr', {}, h('td', {}, d.stage), h('td', {}, d.reason), h('td', { class: 'num' }, num(d.count)))))
      : h('p', { class: 'muted' }, 'None.'),
  );
}

// rate is a stage's messages per second over the last minute, "–" when it handled none.
const rate = (r) => (!r ? '–' : r < 10 ? r.toFixed(2) : Math.round(r).toLocaleString());

// eta is the time the messages a stage has left take at its rate: "–" when none are
// left, "?" when it handled none lately.
function eta(st) {
  if (!(st.pending > 0 || st.in_flight > 0)) return '–';
  const s = Math.ceil(st.eta_seconds || 0);
  if (s <= 0) return '?';
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

const card = (label, v) => h('div', { class: 'card' }, h('b', {}, num(v)), label);

// ---------- Documents ----------

pages.documents = (main) => {
  const fileInput = h('input', { type: 'file', id: 'file', multiple: true, accept: '.md,.markdown,.txt,.text,.html,.htm,.pdf' });
  const msg = h('div', { id: 'upload-status', 'aria-live': 'polite' });
  const drop = h('div', { class: 'dropzone', id: 'dropzone' }, 'Drop Markdown, text, HTML or PDF files here, or ',
    h('label', {}, h('span', { class: 'link' }, 'choose files'), ' ', fileInput));
  const table = h('div', { id: 'documents' }, h('p', { class: 'muted' }, 'Loading…'));
  // What the list shows: a filter on title and id, and the column it is sorted by.
  const view = { filter: '', sort: 'title', desc: false };
  const filter = h('input', { type: 'search', id: 'doc-filter', placeholder: 'Filter by title or id', 'aria-label': 'Filter documents by title or id' });
  main.append(h('h1', {}, 'Documents'), drop, msg, filter, table);
  let stop = false;
  let timer = null;
  // Uploaded ids not listed yet: the list may learn of a document only once the
  // pipeline has read it, so the page polls until they are listed and indexed.
  const awaiting = new Set();
  let deadline = 0;
  const refresh = async () => {
    clearTimeout(timer);
    const r = await listDocuments(table, refresh, view);
    for (const id of r.listed) awaiting.delete(id);
    if (!stop && (r.pending || (awaiting.size && Date.now() < deadline))) timer = setTimeout(refresh, 1500);
  };
  const upload = async (files) => {
    if (!files.length) return;
    const fd = new FormData();
    // A file chosen with its folder keeps its path, so it gets the id graphrag publish
    // gives it when it publishes the folder's parent.
    for (const f of files) fd.append('file', f, f.webkitRelativePath || f.name);
    fill(msg, h('p', { class: 'muted' }, `Uploading ${files.length} file(s)…`));
    try {
      const r = await (await api(corpusPath('/documents'), { method: 'POST', body: fd })).json();
      fill(msg, h('p', { class: 'ok' }, `Published ${r.ids?.length ?? files.length} document(s); indexing…`));
      for (const id of r.ids || []) awaiting.add(id);
      deadline = Date.now() + 10 * 60 * 1000;
      refresh();
    } catch (err) {
      fill(msg, errorBox(err));
    }
  };
  fileInput.addEventListener('change', () => upload([...fileInput.files]));
  filter.addEventListener('input', () => { view.filter = filter.value; refresh(); });
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => { ev.preventDefault(); drop.classList.remove('over'); upload([...ev.dataTransfer.files]); });
  refresh();
  return () => { stop = true; clearTimeout(timer); };
};

// allDocuments reads every page of the corpus's documents (at most 5,000).
async function allDocuments() {
  const docs = [];
  let cursor = '';
  do {
    const r = await getJSON(corpusPath(`/documents?limit=200${cursor ? '&cursor=' + enc(cursor) : ''}`));
    docs.push(...(r.documents || []));
    cursor = r.next || '';
  } while (cursor && docs.length < 5000);
  return docs;
}

// Columns the documents list sorts by, with the value each compares.
const docSorts = {
  title: (d) => (d.title || d.id).toLowerCase(),
  state: (d) => d.state,
  chunks: (d) => d.chunks || 0,
  id: (d) => d.id,
  updated: (d) => d.updated || '',
};

// listDocuments renders every page of the corpus's documents, those view.filter matches
// sorted by view.sort; it returns whether any is still pending (the caller polls until
// none is) and the ids listed.
async function listDocuments(table, refresh, view) {
  let docs;
  try {
    docs = await allDocuments();
  } catch (err) {
    fill(table, errorBox(err));
    return { pending: false, listed: [] };
  }
  const q = view.filter.trim().toLowerCase();
  const key = docSorts[view.sort];
  const shown = docs.filter((d) => !q || (d.title || '').toLowerCase().includes(q) || d.id.toLowerCase().includes(q))
    .sort((a, b) => {
      const x = key(a), y = key(b);
      const c = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
      return view.desc ? -c : c;
    });
  const header = (col, label, cls) => h('th', { class: cls, dataset: { sort: col }, 'aria-sort': view.sort === col ? (view.desc ? 'descending' : 'ascending') : 'none' },
    h('button', { type: 'button', class: 'sort', onclick: () => { view.desc = view.sort === col ? !view.desc : false; view.sort = col; refresh(); } },
      label, view.sort === col ? (view.desc ? ' ▾' : ' ▴') : ''));
  fill(table, h('p', { class: 'muted', id: 'doc-count' }, q ? `${shown.length} of ${docs.length} documents` : `${docs.length} documents`), h('table', { class: 'wide' },
    h('tr', {}, header('title', 'title'), header('state', 'state'), header('chunks', 'chunks', 'num'), header('id', 'id'), header('updated', 'updated'), h('th', {}, '')),
    shown.map((d) => h('tr', { dataset: { id: d.id } },
      h('td', { class: 'title' }, d.title || d.id),
      h('td', {}, h('span', { class: `badge ${d.state}` }, d.state), d.reason ? h('div', { class: 'error' }, d.reason) : null),
      h('td', { class: 'num' }, num(d.chunks)), h('td', {}, h('code', {}, d.id)), h('td', { class: 'muted' }, d.updated ? new Date(d.updated).toLocaleString() : ''),
      h('td', {}, deleteButton(d, refresh))))));
  return { pending: docs.some((d) => d.state === 'pending'), listed: docs.filter((d) => d.state !== 'pending').map((d) => d.id) };
}

// deleteButton asks for a second click instead of a native dialog.
function deleteButton(d, refresh) {
  const b = h('button', { type: 'button', class: 'danger' }, 'Delete');
  b.addEventListener('click', async () => {
    if (!b.dataset.armed) {
      b.dataset.armed = '1';
      b.textContent = 'Confirm delete';
      setTimeout(() => { delete b.dataset.armed; b.textContent = 'Delete'; }, 4000);
      return;
    }
    b.disabled = true;
    try {
      await api(corpusPath(`/documents/${enc(d.id)}`), { method: 'DELETE' });
      refresh();
    } catch (err) {
      b.replaceWith(errorBox(err));
    }
  });
  return b;
}

// ---------- Extraction settings ----------

// pages.settings edits the corpus's extraction settings as JSON (the API's format):
// save them as the next version, have the chat model propose some from a sample of the
// corpus, re-extract the corpus under them. Saving and re-extracting need write scope.
pages.settings = (main) => {
  const version = h('p', { id: 'settings-version', class: 'muted' }, 'Loading…');
  const text = h('textarea', { id: 'settings-json', rows: 18, spellcheck: false, 'aria-label': 'Extraction settings as JSON' });
  const msg = h('div', { id: 'settings-status', 'aria-live': 'polite' });
  const show = (r) => {
    version.textContent = r.version ? `Version ${r.version}, saved ${new Date(r.updated_at).toLocaleString()}`
      : 'Version 0: none saved, extraction uses the built-in prompt';
    version.dataset.version = String(r.version);
    text.value = JSON.stringify(r.settings || {}, null, 2);
  };
  const run = (label, fn) => async () => {
    fill(msg, h('p', { class: 'muted' }, `${label}…`));
    try { fill(msg, await fn()); } catch (err) { fill(msg, errorBox(err)); }
  };
  const post = async (path, body) => (await api(corpusPath(path), {
    method: body === undefined ? 'POST' : body.method || 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body?.json ?? {}) })).json();
  const save = run('Saving', async () => {
    let json;
    try { json = JSON.parse(text.value); } catch (e) { throw new Error(`The settings are not valid JSON: ${e.message}`); }
    const r = await post('/extraction-settings', { method: 'PUT', json });
    show(r);
    return h('p', { class: 'ok' }, `Version ${r.version} saved. Chunks extracted from now on use it; nothing is re-extracted until you re-extract the corpus.`);
  });
  const propose = run('Asking the chat model (this takes a while)', async () => {
    const p = await post('/extraction-settings/proposal', { json: { sample: 8 } });
    text.value = JSON.stringify(p.settings, null, 2);
    return [h('p', { class: 'ok' }, `Proposed by ${p.model} from ${p.passages} passages: review, edit, then save.`),
      (p.dropped || []).map((d) => h('p', { class: 'muted' }, `Left out: ${d}`))];
  });
  const reindex = run('Publishing the chunks', async () => {
    const r = await post('/reindex');
    return h('p', { class: 'ok' }, `${num(r.chunks)} chunks of ${num(r.documents)} documents published for extraction under settings version ${r.settings_version}; the Dashboard shows the progress.`);
  });
  main.append(h('h1', {}, 'Extraction settings'),
    h('p', { class: 'muted' }, 'Entity types, a domain description, worked examples and a replacement system prompt for the chat model that extracts this corpus (offline extraction ignores them).'),
    version, text,
    h('p', {}, h('button', { type: 'button', id: 'settings-save', onclick: save }, 'Save'), ' ',
      h('button', { type: 'button', id: 'settings-propose', class: 'secondary', onclick: propose }, 'Propose from a sample'), ' ',
      h('button', { type: 'button', id: 'settings-reindex', class: 'secondary', onclick: reindex }, 'Re-extract the corpus')),
    msg);
  getJSON(corpusPath('/extraction-settings')).then(show, (err) => { version.textContent = ''; fill(msg, errorBox(err)); });
};

// ---------- start ----------

setupToken();
setupCorpus();
loadCorpora();
window.addEventListener('hashchange', route);
route();
