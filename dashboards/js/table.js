// Metric tables: the sortable breakdown table (every metric a column) and the small ones.
import { h } from './dom.js';
import { formatCount, formatRate } from './format.js';

/**
 * Columns of the main table: [id, heading, how to read it, whether the API sorts by it,
 * the group it is drawn under (one heading over its columns), if any].
 */
export const COLUMNS = [
  ['clicks', 'Clicks', (m) => m.clicks, true],
  ['unique_clicks', 'Unique clicks', (m) => m.unique_clicks, true],
  ['installs', 'Installs', (m) => m.installs, true],
  ['opens', 'Opens', (m) => m.opens, true],
  ['deferred_opens', 'Deferred opens', (m) => m.deferred_opens, true],
  ['fallbacks', 'Fallbacks', (m) => m.fallbacks, true],
  ['install_rate', 'Install rate', (m) => m.install_rate, true],
  ['open_rate', 'Open rate', (m) => m.open_rate, true],
  ['fallback_rate', 'Fallback rate', (m) => m.fallback_rate, true],
  ['installs_install_referrer', 'Referrer', (m) => m.installs_by_match.install_referrer, false, 'Installs by match'],
  ['installs_click_id', 'Click id', (m) => m.installs_by_match.click_id, false, 'Installs by match'],
  ['installs_ref', 'Ref', (m) => m.installs_by_match.ref, false, 'Installs by match'],
  ['installs_fingerprint', 'Fingerprint', (m) => m.installs_by_match.fingerprint, false, 'Installs by match'],
  ['installs_organic', 'Organic', (m) => m.installs_by_match.organic, false, 'Installs by match'],
  ['opens_install_referrer', 'Referrer', (m) => m.opens_by_match.install_referrer, false, 'Opens by match'],
  ['opens_click_id', 'Click id', (m) => m.opens_by_match.click_id, false, 'Opens by match'],
  ['opens_ref', 'Ref', (m) => m.opens_by_match.ref, false, 'Opens by match'],
  ['opens_fingerprint', 'Fingerprint', (m) => m.opens_by_match.fingerprint, false, 'Opens by match'],
  ['opens_organic', 'Organic', (m) => m.opens_by_match.organic, false, 'Opens by match'],
  ['bot_events', 'Bot events', (m) => m.bot_events, true],
];

const isRate = (id) => id.endsWith('_rate');
const cellText = (id, value) => (isRate(id) ? formatRate(value) : formatCount(value));

/**
 * The name cell: a button that drills down (or filters), or "(none)" for organic/missing;
 * `label` is shown instead of the key when given.
 */
function nameCell(key, onSelect, title, label = key) {
  if (key === null) return h('th', { scope: 'row', class: 'muted' }, '(none)');
  return h('th', { scope: 'row' }, onSelect
    ? h('button', { type: 'button', class: 'row-link', title, dataset: { key }, onclick: () => onSelect(key) }, label)
    : label);
}

/**
 * The breakdown table. `sort`/`order` show the API's current sort; clicking a sortable
 * heading calls `onSort(metric)`; clicking a row's name calls `onSelect(key)`.
 */
export function metricsTable({ rows, keyLabel, sort, order, onSort, onSelect, selectTitle }) {
  // Two heading rows: a grouped column's group spans its columns above their short names;
  // every other heading spans both rows.
  const top = [h('th', { scope: 'col', rowspan: 2 }, keyLabel)];
  const bottom = [];
  COLUMNS.forEach(([id, heading, , sortable, group], index) => {
    const sorted = sort === id;
    const ariaSort = sorted ? (order === 'asc' ? 'ascending' : 'descending') : undefined;
    const cell = h('th', {
      scope: 'col', class: 'num', 'aria-sort': ariaSort, dataset: { column: id }, rowspan: group ? undefined : 2,
      title: group ? `${group}: ${heading}` : undefined,
    }, sortable
      ? h('button', { type: 'button', class: `sort${sorted ? ` sorted-${order}` : ''}`, onclick: () => onSort(id) }, heading)
      : heading);
    if (!group) {
      top.push(cell);
      return;
    }
    if (COLUMNS[index - 1]?.[4] !== group) {
      top.push(h('th', { scope: 'colgroup', class: 'group', colspan: COLUMNS.filter((column) => column[4] === group).length }, group));
    }
    bottom.push(cell);
  });
  const body = rows.map((row) => h('tr', { dataset: { key: row.key ?? '' } },
    nameCell(row.key, onSelect, selectTitle),
    ...COLUMNS.map(([id, , read]) => {
      const value = read(row.metrics);
      return h('td', { class: 'num', dataset: { column: id, value: value ?? '' } }, cellText(id, value));
    })));
  return h('table', { class: 'metrics' }, h('thead', {}, h('tr', {}, top), h('tr', {}, bottom)), h('tbody', {}, body));
}

/** A compact breakdown (platform, source): name, clicks, installs, install rate, fallbacks. */
export function smallTable({ rows, keyLabel, onSelect }) {
  const columns = [['clicks', 'Clicks'], ['installs', 'Installs'], ['install_rate', 'Install rate'], ['fallbacks', 'Fallbacks']];
  if (rows.length === 0) return h('p', { class: 'muted' }, 'Nothing in this range.');
  return h('table', { class: 'metrics small' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, keyLabel), ...columns.map(([, heading]) => h('th', { scope: 'col', class: 'num' }, heading)))),
    h('tbody', {}, rows.map((row) => h('tr', { dataset: { key: row.key ?? '' } },
      nameCell(row.key, onSelect, `Filter by this ${keyLabel.toLowerCase()}`),
      ...columns.map(([id]) => h('td', { class: 'num', dataset: { column: id, value: row.metrics[id] ?? '' } }, cellText(id, row.metrics[id])))))));
}

/**
 * Countries: name, share of clicks, share of installs, clicks, installs, install rate. The
 * country's name comes from the browser (`Intl.DisplayNames`), its code beside it.
 */
export function countryTable({ rows, totals, onSelect }) {
  if (rows.length === 0) return h('p', { class: 'muted' }, 'Nothing in this range.');
  const share = (value, total) => (total > 0 ? formatRate(value / total) : '–');
  const columns = [
    ['click_share', 'Clicks %', (m) => share(m.clicks, totals.clicks)],
    ['install_share', 'Installs %', (m) => share(m.installs, totals.installs)],
    ['clicks', 'Clicks', (m) => formatCount(m.clicks)],
    ['installs', 'Installs', (m) => formatCount(m.installs)],
    ['install_rate', 'Install rate', (m) => formatRate(m.install_rate)],
  ];
  return h('table', { class: 'metrics small' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Country'), ...columns.map(([, heading]) => h('th', { scope: 'col', class: 'num' }, heading)))),
    h('tbody', {}, rows.map((row) => h('tr', { dataset: { key: row.key ?? '' } },
      nameCell(row.key, onSelect, 'Filter by this country', countryName(row.key)),
      ...columns.map(([id, , text]) => h('td', { class: 'num', dataset: { column: id } }, text(row.metrics)))))));
}

const regionNames = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'region' }) : null;

/** "Germany (DE)", or the code alone when the browser has no name for it. */
export function countryName(code) {
  if (code === null) return null;
  let name = null;
  try { name = regionNames?.of(code) ?? null; } catch { name = null; }
  return name && name !== code ? `${name} (${code})` : code;
}

