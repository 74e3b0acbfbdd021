// DOM building, formatting and the view lifecycle shared by every view.

/** `h('a', {href: '#/x', class: 'link'}, 'text', child, [more])`: an element. `on*` attributes are listeners. */
export function h(tag, attrs, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'value') element.value = value;
    // Style goes through the CSSOM: the page's Content-Security-Policy refuses inline style attributes.
    else if (name === 'style') for (const [key, v] of Object.entries(value)) element.style.setProperty(key, v);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

// ---- view lifecycle --------------------------------------------------------------------------------

let generation = 0;
let cleanups = [];

/** Starts a view: ends the previous one (its timers) and returns a ticket to check after every await. */
export function beginView() {
  for (const cleanup of cleanups) cleanup();
  cleanups = [];
  generation += 1;
  return generation;
}

/** Whether the view holding `ticket` is still the one on screen. */
export const isCurrent = (ticket) => ticket === generation;

/** Runs `fn` when the view is left. */
export function onLeave(fn) {
  cleanups.push(fn);
}

/** Calls `fn` every `ms` while the view is shown and the tab is visible. */
export function every(ms, fn) {
  const timer = setInterval(() => {
    if (!document.hidden) fn();
  }, ms);
  onLeave(() => clearInterval(timer));
}

export function show(...nodes) {
  const main = document.getElementById('main');
  main.replaceChildren(...nodes.flat().filter(Boolean));
  return main;
}

// ---- pieces ----------------------------------------------------------------------------------------

export const STATES = ['PROCESSING', 'SUCCESS', 'PARTIAL', 'FAILURE'];

export function badge(state, extra = {}) {
  const value = state || 'UNKNOWN';
  return h('span', { class: `badge state-${value.toLowerCase()}`, 'data-state': value, ...extra }, title(value));
}

export const title = (word) => String(word).charAt(0) + String(word).slice(1).toLowerCase().replace(/_/g, ' ');

export function errorBox(error) {
  const body = error && error.body;
  return h('div', { class: 'notice notice-error', role: 'alert' },
    h('strong', {}, body && body.error ? body.error : 'Something went wrong'), ' ',
    error && error.message ? error.message : String(error));
}

export const empty = (text) => h('div', { class: 'empty' }, text);

export const mono = (text, extra = {}) => h('code', { class: 'mono', ...extra }, text);

/** A definition list from `[label, value]` pairs; pairs with an empty value are skipped. */
export function facts(pairs, extra = {}) {
  return h('dl', { class: 'facts', ...extra },
    pairs.filter(([, value]) => value !== undefined && value !== null && value !== '')
      .map(([label, value]) => [h('dt', {}, label), h('dd', {}, value)]));
}

export function section(heading, extra, ...children) {
  return h('section', { class: 'card', ...extra }, h('h2', { class: 'card-title' }, heading), ...children);
}

// ---- formatting ------------------------------------------------------------------------------------

/** `2026-11-23T14:00:05.123456+00:00` as `2026-11-23 14:00:05` (UTC, as the server keeps it). */
export function time(iso) {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

export const day = (iso) => (iso ? iso.slice(0, 10) : '—');

/** `00:03:12` as `3m 12s`. */
export function duration(hms) {
  if (!hms) return '—';
  const [hours, minutes, seconds] = hms.split(':').map(Number);
  const parts = [];
  if (hours) parts.push(`${hours}h`);
  if (minutes || hours) parts.push(`${minutes}m`);
  parts.push(`${seconds}s`);
  return parts.join(' ');
}

/** `+18005550100` (or `8005550100`) as `+1 (800) 555-0100`. */
export function phone(number) {
  const match = /^(?:\+?1)?(\d{3})(\d{3})(\d{4})$/.exec(number || '');
  return match ? `+1 (${match[1]}) ${match[2]}-${match[3]}` : number || '—';
}

/**
 * The part of a request id that tells requests apart. Ids are UUID v7: the first twelve hex digits are the
 * creation time, so ids minted in the same minute share their start, and every single request ends in its
 * batch place `0001`. The last group (32 random bits, then the four-digit place in its batch) differs between
 * batches and between members of one batch, so that is what is shown. Other ids longer than 13 characters
 * keep their last twelve.
 */
export function shortId(id) {
  if (!id || id.length <= 13) return id;
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-([0-9a-f]{12})$/i.exec(id);
  return `…${uuid ? uuid[1] : id.slice(-12)}`;
}

/** Puts `text` on the clipboard: the Clipboard API where the page is a secure context, else a selection. */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = h('textarea', { class: 'offscreen', readonly: true }, text);
  document.body.append(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('copy refused');
}

/** A small button that copies `text` and says so; its clicks stay out of the row that holds it. */
export function copyButton(text, what, extra = {}) {
  const button = h('button', {
    type: 'button', class: 'button button-quiet button-small copy', title: `Copy ${what}`,
    'aria-label': `Copy ${what} ${text}`, 'data-copy': text, ...extra,
  }, 'Copy');
  button.addEventListener('click', async (event) => {
    event.stopPropagation();
    let said = 'Copied';
    try {
      await copyText(text);
    } catch {
      said = 'Copy failed';
    }
    button.textContent = said;
    setTimeout(() => { button.textContent = 'Copy'; }, 1500);
  });
  return button;
}

/** Spec 2.2 rule 2: an explicit non-answer, detected by prefix on any type. */
export const isCannotAnswer = (value) => typeof value === 'string' && value.startsWith('CANNOT ANSWER');

/** Builds a `#/path?query` link, leaving out empty parameters. */
export function hashLink(path, query = {}) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value) params.set(key, value);
  const text = params.toString();
  return `#${path}${text ? `?${text}` : ''}`;
}
