// The dashboard: reads its state from the URL, asks the stats API, renders tiles, chart,
// funnel and tables. Every change of state is a new URL (back and forward work).
import { ApiError, forgetKey, getJSON, request, storeKey, storedKey } from './api.js';
import { Chart } from './chart.js';
import { byId, h, replace, saveFile, svg } from './dom.js';
import { countChange, formatAge, formatCount, formatRate, rateChange, withLinkFigures } from './format.js';
import { AUDIENCE, FILTERS, apiRange, formatState, parseState, todayIn, addDays } from './state.js';
import { loadLinks, setUpLinks, showLinkForm } from './links.js';
import { countryName, countryTable, metricsTable, smallTable } from './table.js';

const PAGE_SIZE = 50;
// Two rows of five: clicks and installs, then opens and fallbacks. Rates count only what links
// brought; organic installs and opens are figures of their own.
const TILES = [
  ['clicks', 'Clicks'], ['unique_clicks', 'Unique clicks'], ['installs_from_links', 'Installs from links'],
  ['installs_organic', 'Organic installs'], ['install_rate', 'Install rate'],
  ['opens_from_links', 'Opens from links'], ['opens_organic', 'Organic opens'], ['open_rate', 'Open rate'],
  ['fallbacks', 'Fallbacks'], ['fallback_rate', 'Fallback rate'],
];

let state = parseState(location.search);
let generation = 0;
let firstRender = true;
let actionStart = 0;
let chart;

// ---- Sign-in -------------------------------------------------------------------------

function showSignIn(message) {
  byId('dashboard').hidden = true;
  byId('controls').hidden = true;
  byId('sign-in').hidden = false;
  const error = byId('sign-in-error');
  error.hidden = !message;
  error.textContent = message ?? '';
  byId('key').focus();
  document.body.dataset.state = 'sign-in';
}

/** Why a key cannot sign in, or null when it can (a read or admin key). */
function refusal(current) {
  if (current.kind === 'ingest') {
    return 'That is an ingest key: it sends events but cannot read stats. Sign in with a read or admin key.';
  }
  return null;
}

/** Shows which key is signed in and what it may do, in the header. */
function showKey(current) {
  const badge = byId('key-kind');
  const name = current.configured ? 'given by flag' : current.name;
  badge.textContent = `${current.kind === 'admin' ? 'Admin' : 'Read'} key · ${name}`;
  badge.title = `This key may ${current.may}.`;
  badge.hidden = false;
  document.body.dataset.keyKind = current.kind;
  showLinkForm(current.kind === 'admin');
}

async function signIn(event) {
  event.preventDefault();
  const key = byId('key').value.trim();
  const error = byId('sign-in-error');
  let current;
  try {
    current = await getJSON('key', {}, key);
  } catch (failure) {
    error.hidden = false;
    error.textContent = failure.status === 401
      ? 'That key was not accepted: it is unknown or revoked. Sign in with a read or admin key (`linkpulse keys create --kind read --name dashboard` makes one).'
      : failure.message;
    return;
  }
  const why = refusal(current);
  if (why) {
    error.hidden = false;
    error.textContent = why;
    return;
  }
  storeKey(key);
  byId('key').value = '';
  showKey(current);
  showDashboard();
}

/** At start: checks the stored key and shows what it may do, or asks for another. */
async function resume() {
  try {
    const current = await getJSON('key', {});
    const why = refusal(current);
    if (why) throw new ApiError(403, why);
    showKey(current);
    showDashboard();
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      forgetKey();
      showSignIn(error.status === 401 ? 'The stored key is no longer accepted (revoked?). Sign in with a read or admin key.' : error.message);
      return;
    }
    showDashboard();
  }
}

function signOut() {
  forgetKey();
  byId('key-kind').hidden = true;
  delete document.body.dataset.keyKind;
  showSignIn();
}

function showDashboard() {
  byId('sign-in').hidden = true;
  byId('dashboard').hidden = false;
  byId('controls').hidden = false;
  load();
}

// ---- State changes ---------------------------------------------------------------------

/** Applies a change, records it in the URL (a new history entry) and reloads the data. */
function change(patch) {
  actionStart = performance.now();
  state = { ...state, page: 0, ...patch, filters: { ...state.filters, ...(patch.filters ?? {}) } };
  for (const name of [...FILTERS, ...AUDIENCE]) if (!state.filters[name]) delete state.filters[name];
  history.pushState(null, '', formatState(state));
  load();
}

function syncControls() {
  byId('range').value = state.range;
  byId('custom-dates').hidden = state.range !== 'custom';
  const range = apiRange(state);
  byId('from').value = range.current.from.slice(0, 10);
  byId('to').value = range.current.to.slice(0, 10);
  const zone = byId('tz');
  if (![...zone.options].some((option) => option.value === state.tz)) zone.append(h('option', { value: state.tz }, state.tz));
  zone.value = state.tz;
  byId('bots').checked = state.bots;
}

function setUpControls() {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const zone = byId('tz');
  replace(zone, ...['UTC', ...zones.filter((z) => z !== 'UTC')].map((z) => h('option', { value: z }, z)));
  byId('range').addEventListener('change', (event) => {
    const range = event.target.value;
    if (range === 'custom') {
      const today = todayIn(state.tz);
      change({ range, from: state.from ?? addDays(today, -6), to: state.to ?? today });
    } else {
      change({ range });
    }
  });
  for (const id of ['from', 'to']) {
    byId(id).addEventListener('change', () => {
      const from = byId('from').value;
      const to = byId('to').value;
      if (from && to && from <= to) change({ range: 'custom', from, to });
    });
  }
  zone.addEventListener('change', (event) => change({ tz: event.target.value }));
  byId('bots').addEventListener('change', (event) => change({ bots: event.target.checked }));
  byId('sign-out').addEventListener('click', signOut);
  byId('sign-in-form').addEventListener('submit', signIn);
  byId('download').addEventListener('click', downloadCSV);
  byId('controls').addEventListener('submit', (event) => event.preventDefault());
  for (const button of byId('views').querySelectorAll('button')) {
    button.addEventListener('click', () => change({ view: button.dataset.view }));
  }
  setUpLinks({ onCreated: () => load() });
  window.addEventListener('popstate', () => {
    actionStart = performance.now();
    state = parseState(location.search);
    load();
  });
}

// ---- Loading ---------------------------------------------------------------------------

/** The parameters every request shares: zone, bots and filters. */
function commonParameters() {
  return { tz: state.tz, include_bots: state.bots ? 'true' : 'false', ...state.filters };
}

const tableDimension = () => (state.filters.campaign ? 'ref' : 'campaign');

/** Loads the view the state names. */
function load() {
  const current = ++generation;
  syncControls();
  byId('stats-view').hidden = state.view !== 'stats';
  byId('links-view').hidden = state.view !== 'links';
  for (const button of byId('views').querySelectorAll('button')) {
    if (button.dataset.view === state.view) button.setAttribute('aria-current', 'page'); else button.removeAttribute('aria-current');
  }
  setStatus('loading', 'Loading…');
  return state.view === 'links' ? loadLinksView(current) : loadStats(current);
}

/** The Links view: every link with its figures over the range. */
async function loadLinksView(current) {
  try {
    await loadLinks({
      page: state.page,
      range: apiRange(state).current,
      parameters: commonParameters(),
      onShowStats: (ref) => change({ view: 'stats', filters: { ref } }),
      onPage: (page) => change({ page }),
      isCurrent: () => current === generation,
    });
    if (current !== generation) return;
    setStatus('ready', '');
    markRendered();
  } catch (error) {
    failed(current, error);
  }
}

async function loadStats(current) {
  renderCrumbs();
  renderChips();
  const range = apiRange(state);
  const common = commonParameters();
  const by = tableDimension();
  try {
    const [summary, previous, series, table, platforms, sources, progress] = await Promise.all([
      getJSON('stats/summary', { ...common, ...range.current }),
      getJSON('stats/summary', { ...common, ...range.previous }),
      getJSON('stats/timeseries', { ...common, ...range.current, interval: range.interval }),
      getJSON('stats/breakdown', {
        ...common, ...range.current, by, sort: state.sort, order: state.order, limit: PAGE_SIZE, offset: state.page * PAGE_SIZE,
      }),
      getJSON('stats/breakdown', { ...common, ...range.current, by: 'platform', limit: 10 }),
      getJSON('stats/breakdown', { ...common, ...range.current, by: 'source', limit: 10 }),
      getJSON('admin/rollup', {}),
    ]);
    if (current !== generation) return;
    const empty = isEmpty(summary.metrics) && Object.keys(state.filters).length === 0 && await hasNoEventsAtAll();
    if (current !== generation) return;
    byId('empty').hidden = !empty;
    byId('content').hidden = empty;
    if (empty) {
      byId('curl-line').textContent = curlLine();
    } else {
      renderTiles(withLinkFigures(summary.metrics), withLinkFigures(previous.metrics));
      byId('tiles').dataset.previousFrom = previous.from;
      byId('tiles').dataset.previousTo = previous.to;
      chart.update(series.points.map((p) => ({ ...p, metrics: withLinkFigures(p.metrics) })), series.interval);
      byId('chart-title').textContent = series.interval === 'hour' ? 'Per hour' : 'Per day';
      renderFunnel(withLinkFigures(summary.metrics));
      renderTable(table, by);
      replace(byId('by-platform'), smallTable({ rows: platforms.rows, keyLabel: 'Platform', onSelect: (key) => change({ filters: { platform: key } }) }));
      replace(byId('by-source'), smallTable({ rows: sources.rows, keyLabel: 'Source', onSelect: (key) => change({ filters: { source: key } }) }));
      loadAudience(current, { ...common, ...range.current }, summary.metrics);
    }
    renderRecount(progress);
    setStatus('ready', `${summary.from.slice(0, 16).replace('T', ' ')} – ${summary.to.slice(0, 16).replace('T', ' ')} (${summary.tz})`
      + ` · updated ${formatAge(summary.lag_seconds)}`);
    byId('status').dataset.countedThrough = summary.counted_through;
    markRendered();
  } catch (error) {
    failed(current, error);
  }
}

/** The audience panels' titles, by dimension. */
const AUDIENCE_LABELS = { device: 'Device', os: 'System', browser: 'Browser', referrer_host: 'Referrer' };

/**
 * The audience panels (countries, devices, systems, browsers, referrers), loaded after the rest
 * of the page has rendered: five more questions, whose edges inside a UTC day (a zone other
 * than UTC) SQLite counts from the raw events; the page does not wait for them.
 * `body[data-audience]` says when they are drawn.
 */
async function loadAudience(current, parameters, totals) {
  document.body.dataset.audience = 'loading';
  const shown = ['country', ...Object.keys(AUDIENCE_LABELS)];
  try {
    const answers = await Promise.all(shown.map((by) => getJSON('stats/breakdown', { ...parameters, by, limit: by === 'country' ? 20 : 10 })));
    if (current !== generation) return;
    answers.forEach((answer, i) => {
      const by = shown[i];
      const onSelect = (key) => change({ filters: { [by]: key } });
      if (by === 'country') {
        replace(byId('by-country'), countryTable({ rows: answer.rows, totals, onSelect }));
        replace(byId('country-bars'), countryBars(answer.rows, onSelect));
      } else {
        replace(byId(`by-${by}`), smallTable({ rows: answer.rows, keyLabel: AUDIENCE_LABELS[by], onSelect }));
      }
    });
    document.body.dataset.audience = 'ready';
  } catch (error) {
    if (current !== generation) return;
    for (const by of shown) replace(byId(`by-${by}`), h('p', { class: 'error-text' }, error.message));
    document.body.dataset.audience = 'failed';
  }
}

/** The countries' clicks and installs as horizontal bars, drawn in SVG; a bar filters. */
function countryBars(rows, onSelect) {
  const known = rows.filter((row) => row.key !== null).slice(0, 10);
  if (known.length === 0) return h('p', { class: 'muted' }, 'No country known in this range.');
  const max = Math.max(1, ...known.map((row) => row.metrics.clicks + row.metrics.installs));
  const [rowHeight, labelWidth, width] = [22, 150, 480];
  const scale = (value) => ((width - labelWidth - 60) * value) / max;
  return svg('svg', { viewBox: `0 0 ${width} ${known.length * rowHeight}`, class: 'bars', role: 'img', 'aria-label': 'Clicks and installs by country' },
    known.map((row, i) => {
      const y = i * rowHeight;
      const clicks = scale(row.metrics.clicks), installs = scale(row.metrics.installs);
      return svg('g', { class: 'bar', dataset: { key: row.key }, onclick: () => onSelect(row.key) },
        svg('title', {}, `${countryName(row.key)}: ${formatCount(row.metrics.clicks)} clicks, ${formatCount(row.metrics.installs)} installs`),
        svg('text', { x: labelWidth - 6, y: y + 15, 'text-anchor': 'end' }, countryName(row.key)),
        svg('rect', { x: labelWidth, y: y + 4, width: Math.max(clicks, 1), height: 14, class: 'bar-clicks' }),
        svg('rect', { x: labelWidth + clicks, y: y + 4, width: installs, height: 14, class: 'bar-installs' }),
        svg('text', { x: labelWidth + clicks + installs + 4, y: y + 15, class: 'bar-value' }, formatCount(row.metrics.clicks)));
    }));
}

/** A load that failed: a refused key signs out; anything else says what and offers a retry. */
function failed(current, error) {
  if (current !== generation) return;
  if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
    forgetKey();
    showSignIn('The stored key is no longer accepted (revoked?). Sign in with a read or admin key.');
    return;
  }
  setStatus('error', error.message, true);
}

/** Records how long the render took (Performance API), for the browser tests and benchmarks. */
function markRendered() {
  const end = performance.now();
  if (firstRender) {
    performance.measure('lp:first-render', { start: 0, end });
    firstRender = false;
  } else {
    performance.measure('lp:update', { start: actionStart, end });
  }
  document.body.dataset.state = 'ready';
  document.body.dataset.generation = String(generation);
}

const isEmpty = (m) => m.clicks + m.installs + m.opens + m.fallbacks + m.bot_events === 0;

/** Whether the server has no events at all (over the longest range the API allows). */
async function hasNoEventsAtAll() {
  const today = todayIn('UTC');
  const all = await getJSON('stats/summary', { from: addDays(today, -399), to: today, tz: 'UTC', include_bots: 'true' });
  return isEmpty(all.metrics);
}

function curlLine() {
  return `curl ${location.origin}/v1/events \\\n  -H "Authorization: Bearer YOUR_INGEST_KEY" -H "Content-Type: application/json" \\\n`
    + `  -d '{"id":"first-event-1","type":"click","ref":"hello","campaign":"launch","platform":"web"}'`;
}

function setStatus(kind, text, retry = false) {
  const status = byId('status');
  status.dataset.kind = kind;
  document.body.dataset.state = kind === 'loading' ? 'loading' : document.body.dataset.state;
  if (kind === 'error') document.body.dataset.state = 'error';
  byId('dashboard').setAttribute('aria-busy', String(kind === 'loading'));
  replace(status, h('span', {}, text), retry && h('button', { type: 'button', class: 'button-secondary', onclick: () => load() }, 'Retry'));
}

// ---- Rendering -------------------------------------------------------------------------

function renderCrumbs() {
  const { campaign, ref } = state.filters;
  const items = [campaign || ref
    ? h('button', { type: 'button', class: 'crumb', onclick: () => change({ filters: { campaign: null, ref: null } }) }, 'All campaigns')
    : h('span', { class: 'crumb current' }, 'All campaigns')];
  if (campaign) {
    items.push(ref
      ? h('button', { type: 'button', class: 'crumb', onclick: () => change({ filters: { ref: null } }) }, campaign)
      : h('span', { class: 'crumb current' }, campaign));
  }
  if (ref) items.push(h('span', { class: 'crumb current' }, `ref ${ref}`));
  replace(byId('crumbs'), ...items.flatMap((item, i) => (i === 0 ? [item] : [h('span', { class: 'crumb-sep', 'aria-hidden': 'true' }, '›'), item])));
}

function renderChips() {
  replace(byId('chips'), ...[...FILTERS, ...AUDIENCE].filter((name) => state.filters[name]).map((name) => h('span', { class: 'chip', dataset: { filter: name } },
    h('span', {}, `${name}: `, h('b', {}, state.filters[name])),
    h('button', { type: 'button', 'aria-label': `Remove the ${name} filter`, title: 'Remove', onclick: () => change({ filters: { [name]: null } }) }, '×'))));
}

function renderTiles(now, before) {
  replace(byId('tiles'), ...TILES.map(([key, label]) => {
    const rate = key.endsWith('_rate');
    const delta = rate ? rateChange(now[key], before[key]) : countChange(now[key], before[key]);
    return h('div', { class: 'tile', dataset: { metric: key, value: now[key] ?? '' } },
      h('span', { class: 'tile-label' }, label),
      h('span', { class: 'tile-value' }, rate ? formatRate(now[key]) : formatCount(now[key])),
      h('span', { class: `tile-change ${delta?.direction ?? 'flat'}`, title: 'Against the period before, over as much of it as has elapsed of this one' },
        delta ? `${delta.text} vs previous` : 'no previous data'));
  }));
}

/** While the rollups count again what they had counted, the figures are short: say so. */
function renderRecount(progress) {
  const banner = byId('recount');
  const left = progress.recount_remaining_events;
  banner.hidden = left === null || left === undefined;
  banner.dataset.remaining = banner.hidden ? '' : String(left);
  banner.textContent = banner.hidden ? ''
    : `Counting again: ${formatCount(left)} stored events are not in these figures yet (after a restore, an upgrade or a rebuild). `
      + 'They fill in as the recount goes; reload to see its progress.';
}

function renderFunnel(m) {
  const top = Math.max(m.clicks, m.installs_from_links, m.opens_from_links, m.fallbacks, 1);
  const bars = [
    ['clicks', 'Clicks', m.clicks], ['installs', 'Installs from links', m.installs_from_links],
    ['opens', 'Opens from links', m.opens_from_links], ['fallbacks', 'Fallbacks (web)', m.fallbacks],
  ];
  replace(byId('funnel'), ...bars.map(([key, label, value]) => {
    const bar = h('div', { class: `funnel-bar series-${key}` });
    bar.style.width = `${(value / top) * 100}%`;
    const share = key === 'clicks' || !m.clicks ? '' : ` · ${formatRate(value / m.clicks)} of clicks`;
    return h('div', { class: 'funnel-row', dataset: { metric: key, value } },
      h('div', { class: 'funnel-label' }, h('span', {}, label), h('span', { class: 'muted' }, `${formatCount(value)}${share}`)),
      h('div', { class: 'funnel-track' }, bar));
  }));
}

function renderTable(answer, by) {
  const drill = by === 'campaign'
    ? (key) => change({ filters: { campaign: key, ref: null } })
    : (key) => change({ filters: { ref: key } });
  byId('table-title').textContent = by === 'campaign' ? 'Campaigns' : `Refs of ${state.filters.campaign}`;
  replace(byId('table'), metricsTable({
    rows: answer.rows,
    keyLabel: by === 'campaign' ? 'Campaign' : 'Ref',
    sort: state.sort,
    order: state.order,
    onSort: (metric) => change({ sort: metric, order: state.sort === metric && state.order === 'desc' ? 'asc' : 'desc' }),
    onSelect: drill,
    selectTitle: by === 'campaign' ? 'Show this campaign and its refs' : 'Show this ref',
  }));
  const first = answer.total_rows === 0 ? 0 : state.page * PAGE_SIZE + 1;
  const last = Math.min(answer.total_rows, (state.page + 1) * PAGE_SIZE);
  replace(byId('pager'),
    h('span', { class: 'muted' }, answer.total_rows === 0 ? 'No rows in this range.' : `Rows ${formatCount(first)}–${formatCount(last)} of ${formatCount(answer.total_rows)}`),
    state.page > 0 && h('button', { type: 'button', class: 'button-secondary', onclick: () => change({ page: state.page - 1 }) }, 'Previous'),
    last < answer.total_rows && h('button', { type: 'button', class: 'button-secondary', onclick: () => change({ page: state.page + 1 }) }, 'Next'));
}

/** Downloads the table shown (all its rows, not just the page) from the CSV export endpoint. */
async function downloadCSV() {
  const button = byId('download');
  button.disabled = true;
  try {
    const response = await request('export.csv', {
      ...commonParameters(), ...apiRange(state).current, by: tableDimension(), sort: state.sort, order: state.order,
    });
    const name = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? 'linkpulse.csv';
    saveFile(await response.blob(), name);
  } catch (error) {
    setStatus('error', `Download failed: ${error.message}`, false);
  } finally {
    button.disabled = false;
  }
}

// ---- Start -----------------------------------------------------------------------------

function start() {
  // A link printed by `linkpulse serve --demo` carries the key in the fragment (never sent to
  // the server); keep it and take it out of the address bar.
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get('key')) {
    storeKey(fragment.get('key'));
    history.replaceState(null, '', location.pathname + location.search);
  }
  chart = new Chart(byId('chart'), byId('legend'));
  setUpControls();
  history.replaceState(null, '', formatState(state));
  if (storedKey()) resume(); else showSignIn();
}

start();
