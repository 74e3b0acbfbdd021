// What was learned of each payer's line (operator contract §11). Routes: #/payers (the directory) and
// #/payers/{name} (a week heat map of median holds, in the payer's zone, and the cost per completed
// request). Operators only (admin, support): it signs in with the operator token the work queue keeps,
// and `?operator=TOKEN` opens it signed in. Every call goes to the admin API itself.

import { beginView, empty, errorBox, facts, h, isCurrent, section, show } from './ui.js';
import { call, operatorToken, signInForm, takeToken } from './queue.js';

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const WHO = 'an admin\'s or support\'s';

/** `mm:ss` (or `h:mm:ss`) of a number of seconds; `—` for none. */
function clock(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const h2 = (n) => String(n).padStart(2, '0');
  const hours = Math.floor(seconds / 3600);
  const rest = `${h2(Math.floor((seconds % 3600) / 60))}:${h2(seconds % 60)}`;
  return hours ? `${hours}:${rest}` : rest;
}

/** A cell's colour: green for the week's shortest median hold to red for its longest. */
function shade(seconds, shortest, longest) {
  const span = Math.max(1, longest - shortest);
  const t = Math.min(1, Math.max(0, (seconds - shortest) / span));
  return `hsl(${Math.round(120 * (1 - t))}, 65%, ${Math.round(78 - 18 * t)}%)`;
}

function refused(error, reopen) {
  return error.status === 401 || error.status === 403
    ? signInForm(error, reopen, 'Payers', WHO)
    : errorBox(error);
}

/** `#/payers`: the directory, each payer a link to its page. */
export async function renderPayers(query) {
  const ticket = beginView();
  takeToken(query, '/payers');
  const reopen = () => renderPayers(new URLSearchParams());
  if (!operatorToken()) return show(signInForm(null, reopen, 'Payers', WHO));
  try {
    const { payers } = await call('GET', 'payers');
    if (!isCurrent(ticket)) return;
    show(h('div', { class: 'page-head' }, h('h1', {}, 'Payers')),
      payers.length ? h('ul', { class: 'payer-list', 'data-testid': 'payer-list' }, payers.map((payer) =>
        h('li', {}, h('a', { href: `#/payers/${encodeURIComponent(payer.name)}`, 'data-testid': 'payer-link' },
          payer.name))))
        : empty('The directory is empty.'));
  } catch (error) {
    if (isCurrent(ticket)) show(refused(error, reopen));
  }
}

/** The week as a 7 × 24 grid of median holds. */
function heatMap(stats) {
  const byKey = new Map(stats.byHour.map((cell) => [`${cell.weekday}-${cell.hour}`, cell]));
  const holds = stats.byHour.map((cell) => cell.medianHoldSeconds).filter((s) => s !== null);
  const [shortest, longest] = [Math.min(...holds), Math.max(...holds)];
  const hours = [...Array(24).keys()];
  return h('table', { class: 'heat', 'data-testid': 'heat-map' },
    h('thead', {}, h('tr', {}, h('th', {}, ''), hours.map((hour) => h('th', { class: 'heat-hour' }, String(hour))))),
    h('tbody', {}, WEEKDAYS.map((day, index) => h('tr', {}, h('th', { class: 'heat-day' }, day),
      hours.map((hour) => {
        const cell = byKey.get(`${index + 1}-${hour}`);
        const median = cell ? cell.medianHoldSeconds : null;
        const title = cell
          ? `${day} ${hour}:00 — ${cell.calls} calls, ${cell.reached} reached, median hold ${clock(median)}`
          : `${day} ${hour}:00 — no call`;
        return h('td', {
          class: cell ? 'heat-cell' : 'heat-cell heat-empty', title, 'data-testid': 'heat-cell',
          'data-weekday': index + 1, 'data-hour': hour, 'data-calls': cell ? cell.calls : 0,
          'data-median': median === null ? '' : median,
          style: median === null ? null : { background: shade(median, shortest, longest) },
        }, cell ? String(Math.round((median || 0) / 60)) : '');
      })))));
}

/** `#/payers/{name}`: what was learned of one payer's line. */
export async function renderPayer(name, query) {
  const ticket = beginView();
  const path = `/payers/${encodeURIComponent(name)}`;
  takeToken(query, path);
  const reopen = () => renderPayer(name, new URLSearchParams());
  if (!operatorToken()) return show(signInForm(null, reopen, 'Payers', WHO));
  try {
    const stats = await call('GET', `payers/${encodeURIComponent(name)}/stats`);
    if (!isCurrent(ticket)) return;
    const reachedShare = stats.calls ? `${Math.round((100 * stats.reached) / stats.calls)} %` : '—';
    show(h('div', { class: 'page-head' }, h('h1', { 'data-testid': 'payer-name' }, stats.payer),
      h('a', { class: 'button button-quiet', href: '#/payers' }, 'All payers')),
    section('Last 90 days', { 'data-testid': 'payer-summary' }, facts([
      ['Calls', String(stats.calls)],
      ['Reached a representative', `${stats.reached} (${reachedShare})`],
      ['Median hold', h('span', { 'data-testid': 'payer-median-hold' }, clock(stats.medianHoldSeconds))],
      ['Cost per completed request', h('span', { 'data-testid': 'payer-cost' },
        stats.costPerCompletedRequest === null ? '—' : `$${stats.costPerCompletedRequest}`)],
    ])),
    section('Median hold by hour of the week', {},
      h('p', { class: 'small muted' }, 'Minutes, in the payer\'s time zone; green holds shortest. Hover a cell for its calls.'),
      stats.byHour.length ? heatMap(stats) : empty('No call to this payer yet.')));
  } catch (error) {
    if (isCurrent(ticket)) show(error.status === 404 ? errorBox(error) : refused(error, reopen));
  }
}
