// The dashboard's state lives in the URL's query, so a view can be bookmarked and shared.
// (The read key never goes into the URL; it stays in the browser's storage.)

export const RANGES = ['24h', '7d', '30d', '90d', 'month', 'custom'];
/** The dashboard's views: the stats, and the hosted links with their own figures. */
export const VIEWS = ['stats', 'links'];
export const FILTERS = ['campaign', 'ref', 'source', 'medium', 'platform'];
/** The audience dimensions: each a panel of its own, and a filter like the link ones. */
export const AUDIENCE = ['country', 'device', 'os', 'browser', 'referrer_host', 'language'];
export const METRICS = [
  'clicks', 'unique_clicks', 'installs', 'opens', 'deferred_opens', 'fallbacks',
  'install_rate', 'open_rate', 'fallback_rate', 'bot_events',
];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** Reads the state from a query string, with defaults for anything missing or malformed. */
export function parseState(search) {
  const query = new URLSearchParams(search);
  const state = {
    view: VIEWS.includes(query.get('view')) ? query.get('view') : 'stats',
    range: RANGES.includes(query.get('range')) ? query.get('range') : '7d',
    from: DATE.test(query.get('from') ?? '') ? query.get('from') : null,
    to: DATE.test(query.get('to') ?? '') ? query.get('to') : null,
    tz: query.get('tz') || browserZone(),
    bots: query.get('bots') === '1',
    sort: METRICS.includes(query.get('sort')) ? query.get('sort') : 'clicks',
    order: query.get('order') === 'asc' ? 'asc' : 'desc',
    page: Math.max(0, Number.parseInt(query.get('page') ?? '0', 10) || 0),
    filters: {},
  };
  for (const name of [...FILTERS, ...AUDIENCE]) {
    const value = query.get(name);
    if (value) state.filters[name] = value;
  }
  if (state.range === 'custom' && (!state.from || !state.to || state.from > state.to)) state.range = '7d';
  return state;
}

/** Writes the state as a query string (defaults left out, to keep links short). */
export function formatState(state) {
  const query = new URLSearchParams();
  if (state.view !== 'stats') query.set('view', state.view);
  query.set('range', state.range);
  if (state.range === 'custom') {
    query.set('from', state.from);
    query.set('to', state.to);
  }
  query.set('tz', state.tz);
  if (state.bots) query.set('bots', '1');
  for (const name of [...FILTERS, ...AUDIENCE]) if (state.filters[name]) query.set(name, state.filters[name]);
  if (state.sort !== 'clicks') query.set('sort', state.sort);
  if (state.order !== 'desc') query.set('order', state.order);
  if (state.page > 0) query.set('page', String(state.page));
  return `?${query}`;
}

/** Today's date in a time zone, as YYYY-MM-DD. */
export function todayIn(zone, now = new Date()) {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(now);
  const get = (type) => parts.find((part) => part.type === type).value;
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** Adds days to a YYYY-MM-DD date. */
export function addDays(date, days) {
  const [y, m, d] = date.split('-').map(Number);
  const shifted = new Date(Date.UTC(y, m - 1, d + days));
  return shifted.toISOString().slice(0, 10);
}

const daysBetween = (from, to) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);

/** How far a zone's wall clock is ahead of UTC at an instant (ms). */
function zoneOffsetMs(instant, zone) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(instant));
  const get = (type) => Number(parts.find((part) => part.type === type).value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - Math.floor(instant / 1000) * 1000;
}

/** The instant (ms) a YYYY-MM-DD date starts in a time zone. */
export function startOfDay(date, zone) {
  const [y, m, d] = date.split('-').map(Number);
  const wall = Date.UTC(y, m - 1, d);
  // Twice: the offset at the guess may differ from the offset at midnight (a change of clocks).
  let instant = wall - zoneOffsetMs(wall, zone);
  instant = wall - zoneOffsetMs(instant, zone);
  return instant;
}

/**
 * The API range of the state and of the period before it: {current: {from, to}, previous:
 * {from, to}, interval}. Presets over days use local dates (the API takes `to` as inclusive);
 * "24h" uses instants. A period that holds today is compared with the same elapsed span of
 * the one before (instants), not with a whole one.
 */
export function apiRange(state, now = new Date()) {
  if (state.range === '24h') {
    const to = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
    const from = new Date(to.getTime() - 86_400_000);
    const before = new Date(from.getTime() - 86_400_000);
    return {
      current: { from: from.toISOString(), to: to.toISOString() },
      previous: { from: before.toISOString(), to: from.toISOString() },
      interval: 'hour',
    };
  }
  const today = todayIn(state.tz, now);
  let from;
  let to = today;
  switch (state.range) {
    case '30d': from = addDays(today, -29); break;
    case '90d': from = addDays(today, -89); break;
    case 'month': from = `${today.slice(0, 8)}01`; break;
    case 'custom': ({ from, to } = state); break;
    default: from = addDays(today, -6);
  }
  const length = daysBetween(from, to) + 1;
  const interval = length <= 2 ? 'hour' : 'day';
  if (to < today) {
    return { current: { from, to }, previous: { from: addDays(from, -length), to: addDays(from, -1) }, interval };
  }
  // A period that is not over is compared with as much of the one before as has elapsed of it:
  // today until now against the same hours of the day `length` days earlier.
  const start = startOfDay(from, state.tz);
  const earlierStart = startOfDay(addDays(from, -length), state.tz);
  const elapsed = Math.max(0, now.getTime() - start);
  return {
    current: { from, to },
    previous: { from: new Date(earlierStart).toISOString(), to: new Date(earlierStart + elapsed).toISOString() },
    interval,
  };
}
