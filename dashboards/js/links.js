// The Links view: the hosted links with their figures over the dashboard's range, a form that
// makes one (with a key that may), and a link's QR code.
import { ApiError, getJSON, request, send } from './api.js';
import { byId, h, replace, saveFile } from './dom.js';
import { formatCount, formatRate } from './format.js';

export const LINKS_PAGE_SIZE = 50;

/** The figures of each link's row: [id, heading, whether a rate]. */
const FIGURES = [
  ['clicks', 'Clicks', false], ['unique_clicks', 'Unique clicks', false], ['installs', 'Installs', false],
  ['install_rate', 'Install rate', true], ['opens', 'Opens', false], ['bot_events', 'Bot events', false],
];

let qrURL = null;

/**
 * Loads and draws a page of links with their metrics over `range` ({from, to}) in the zone and
 * bots of `parameters`. Resolves to false when hosted links are off (the view then says how to
 * turn them on). `onShowStats(ref)` opens the stats of one link; `onPage(page)` turns pages.
 */
export async function loadLinks({ page, range, parameters, onShowStats, onPage, isCurrent }) {
  let answer;
  try {
    answer = await getJSON('links', {
      stats: 'true', ...range, tz: parameters.tz, include_bots: parameters.include_bots,
      limit: LINKS_PAGE_SIZE, offset: page * LINKS_PAGE_SIZE,
    });
  } catch (error) {
    if (!isCurrent()) return true;
    if (error instanceof ApiError && error.code === 'links_off') {
      byId('links-off').hidden = false;
      byId('links-on').hidden = true;
      byId('links-off-text').textContent = error.message;
      return false;
    }
    throw error;
  }
  if (!isCurrent()) return true;
  byId('links-off').hidden = true;
  byId('links-on').hidden = false;
  byId('links-range').textContent = `${answer.from.slice(0, 16).replace('T', ' ')} – ${answer.to.slice(0, 16).replace('T', ' ')} (${answer.tz})`;
  replace(byId('links-table'), linksTable(answer.links, onShowStats));
  const first = answer.total === 0 ? 0 : answer.offset + 1;
  const last = answer.offset + answer.links.length;
  replace(byId('links-pager'),
    h('span', { class: 'muted' }, answer.total === 0 ? 'No links yet: make one above.' : `Links ${formatCount(first)}–${formatCount(last)} of ${formatCount(answer.total)}, newest first`),
    page > 0 && h('button', { type: 'button', class: 'button-secondary', onclick: () => onPage(page - 1) }, 'Previous'),
    last < answer.total && h('button', { type: 'button', class: 'button-secondary', onclick: () => onPage(page + 1) }, 'Next'));
  return true;
}

function linksTable(links, onShowStats) {
  if (links.length === 0) return h('p', { class: 'muted' }, 'No links.');
  const head = h('tr', {},
    h('th', { scope: 'col' }, 'Link'), h('th', { scope: 'col' }, 'Campaign'), h('th', { scope: 'col' }, 'Goes to'),
    ...FIGURES.map(([id, heading]) => h('th', { scope: 'col', class: 'num', dataset: { column: id } }, heading)),
    h('th', { scope: 'col' }, 'QR code'));
  const rows = links.map((link) => h('tr', { dataset: { key: link.ref } },
    h('th', { scope: 'row' }, h('button', {
      type: 'button', class: 'row-link', title: 'Show the stats of this link', onclick: () => onShowStats(link.ref),
    }, link.short_url)),
    h('td', {}, link.campaign ?? h('span', { class: 'muted' }, '—')),
    h('td', { class: 'destination', title: link.url }, link.url),
    ...FIGURES.map(([id, , rate]) => {
      const value = link.stats[id];
      return h('td', { class: 'num', dataset: { column: id, value: value ?? '' } }, rate ? formatRate(value) : formatCount(value));
    }),
    h('td', {}, h('button', { type: 'button', class: 'button-secondary qr-button', onclick: () => showQR(link) }, 'QR'))));
  return h('table', { class: 'metrics links' }, h('thead', {}, head), h('tbody', {}, rows));
}

/** Shows a link's QR code (its SVG, fetched with the key) and offers both files. */
export async function showQR(link) {
  const panel = byId('qr');
  panel.hidden = false;
  panel.dataset.ref = link.ref;
  delete panel.dataset.loaded;
  byId('qr-title').textContent = `QR code of ${link.short_url}`;
  const image = byId('qr-image');
  image.alt = `QR code of ${link.short_url}`;
  const blob = await (await request(`links/${encodeURIComponent(link.ref)}/qr.svg`, {})).blob();
  if (panel.dataset.ref !== link.ref) return;
  if (qrURL) URL.revokeObjectURL(qrURL);
  qrURL = URL.createObjectURL(blob);
  image.onload = () => {
    panel.scrollIntoView({ block: 'nearest' });
    panel.dataset.loaded = 'true';
  };
  image.src = qrURL;
  byId('qr-png').onclick = async () => saveFile(await (await request(`links/${encodeURIComponent(link.ref)}/qr.png`, { scale: 16 })).blob(), `${link.ref}.png`);
  byId('qr-svg').onclick = () => saveFile(blob, `${link.ref}.svg`);
}

function hideQR() {
  byId('qr').hidden = true;
  if (qrURL) URL.revokeObjectURL(qrURL);
  qrURL = null;
}

/** The form's fields as a link: empty fields left out. */
function linkBody(form) {
  const value = (name) => form.elements[name].value.trim();
  const body = {};
  for (const name of ['url', 'ref', 'campaign', 'source', 'medium']) if (value(name)) body[name] = value(name);
  if (value('deep_link')) body.deep_link = { value: value('deep_link') };
  const social = {};
  for (const name of ['title', 'description', 'image']) if (value(`social_${name}`)) social[name] = value(`social_${name}`);
  if (Object.keys(social).length > 0) body.social = social;
  return body;
}

/** Wires the form and the QR panel; `onCreated(link)` runs after a link is made. */
export function setUpLinks({ onCreated }) {
  const form = byId('link-form');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const error = byId('link-form-error');
    const created = byId('link-created');
    for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
    error.hidden = true;
    created.hidden = true;
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const link = await send('POST', 'links', linkBody(form));
      form.reset();
      created.hidden = false;
      created.textContent = `Made ${link.short_url}`;
      onCreated(link);
      showQR(link);
    } catch (failure) {
      error.hidden = false;
      error.textContent = failure.message;
      // A field the server names ("social.title") is the input of that name ("social_title").
      const input = failure.field && form.elements[failure.field.replace('.', '_')];
      if (input) {
        input.setAttribute('aria-invalid', 'true');
        input.focus();
      }
    } finally {
      button.disabled = false;
    }
  });
  byId('qr-close').addEventListener('click', hideQR);
}

/** Shows the form to a key that may make links, and says why to any other. */
export function showLinkForm(mayManage) {
  byId('link-form').hidden = !mayManage;
  byId('link-new-readonly').hidden = mayManage;
}
