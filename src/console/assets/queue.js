// The work queue: tasks for people where the automated calls could not finish a request (operator contract
// section 10). Routes: #/queue (open tasks, oldest first) and #/queue/{taskId} (the call sheet beside a form
// built from its questions). It signs in with an operator token of its own (a caller's, or an admin's),
// kept in sessionStorage apart from the request views' session, since a caller may work tasks and read
// nothing else; `#/queue?operator=TOKEN` opens it signed in (the token leaves the address bar at once).
// Every call goes to the admin API itself.

import { ApiError } from './api.js';
import { beginView, badge, errorBox, empty, every, facts, h, isCurrent, section, show, time } from './ui.js';

const OPERATOR_KEY = 'switchboard.console.operator';
const GIVE_UP_CODES = ['PAYER_REFUSAL', 'IVR_FAILURE', 'UNABLE_TO_REACH_HUMAN_IN_TIME', 'REQUIRES_OTHER_CHANNEL', 'OTHER'];
const CANNOT = 'CANNOT ANSWER - ';

export const operatorToken = () => sessionStorage.getItem(OPERATOR_KEY);

/** An admin API call with the operator token (shared with the payer pages). */
export async function call(method, path, body) {
  const init = { method, headers: { Authorization: `Bearer ${operatorToken()}`, Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(`/admin/v1/${path}`, init);
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { message: text };
  }
  if (response.status === 401) sessionStorage.removeItem(OPERATOR_KEY);
  if (!response.ok) throw new ApiError(response.status, json);
  return json;
}

/** The operator sign-in form; `reopen` renders the page again once a token is entered. */
export function signInForm(error, reopen = () => renderQueue(new URLSearchParams()), title = 'Work queue',
  who = 'a caller\'s or an admin\'s') {
  const input = h('input', { type: 'password', class: 'input mono-input', 'data-testid': 'operator-token',
    placeholder: 'sbop_…', autocomplete: 'off' });
  const form = h('form', { class: 'card', 'data-testid': 'queue-signin', onsubmit: (event) => {
    event.preventDefault();
    sessionStorage.setItem(OPERATOR_KEY, input.value.trim());
    reopen();
  } },
  h('h2', { class: 'card-title' }, title),
  h('p', { class: 'muted' }, `Sign in with your operator token (${who}).`),
  error ? errorBox(error) : null,
  h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Operator token'), input),
  h('p', {}, h('button', { type: 'submit', class: 'button button-primary' }, 'Open the queue')));
  return form;
}

/** Takes `?operator=TOKEN` into sessionStorage and out of the address bar. */
export function takeToken(query, path) {
  const token = query.get('operator');
  if (!token) return;
  sessionStorage.setItem(OPERATOR_KEY, token);
  query.delete('operator');
  const rest = query.toString();
  history.replaceState(null, '', `#${path}${rest ? `?${rest}` : ''}`);
}

function age(iso) {
  const minutes = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 60000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} d`;
}

/** `#/queue`: the open and claimed tasks, oldest first. */
export async function renderQueue(query) {
  const ticket = beginView();
  takeToken(query, '/queue');
  if (!operatorToken()) return show(signInForm());
  const load = async () => {
    try {
      const [open, claimed] = await Promise.all([call('GET', 'tasks?state=open'), call('GET', 'tasks?state=claimed')]);
      if (!isCurrent(ticket)) return;
      const tasks = [...open.tasks, ...claimed.tasks].sort((a, b) => a.openedAt.localeCompare(b.openedAt));
      show(h('div', { class: 'page-head' }, h('h1', {}, 'Work queue')),
        tasks.length ? h('table', { class: 'table', 'data-testid': 'task-list' },
          h('thead', {}, h('tr', {}, ['Age', 'Reason', 'Account', 'Schema', 'State', 'Claimed by', ''].map((c) => h('th', {}, c)))),
          h('tbody', {}, tasks.map((task) => h('tr', { 'data-testid': 'task-row', 'data-task': task.taskId },
            h('td', { title: time(task.openedAt) }, age(task.openedAt)),
            h('td', {}, h('span', { class: 'tag tag-missing' }, task.reason)),
            h('td', {}, task.accountId), h('td', {}, task.schemaId),
            h('td', {}, task.state), h('td', {}, task.claimedBy || '—'),
            h('td', {}, h('a', { class: 'button button-small', href: `#/queue/${encodeURIComponent(task.taskId)}`,
              'data-testid': 'open-task' }, 'Open'))))))
          : empty('No task is waiting for a person.'));
    } catch (error) {
      if (!isCurrent(ticket)) return;
      show(error.status === 401 || error.status === 403 ? signInForm(error) : errorBox(error));
    }
  };
  await load();
  every(5000, load);
}

function questionInput(question) {
  const name = question.name;
  let input;
  if (question.type === 'boolean') {
    input = h('select', { class: 'input', name }, h('option', { value: '' }, '—'),
      h('option', { value: 'true' }, 'Yes'), h('option', { value: 'false' }, 'No'));
  } else if (question.type === 'multiple' && question.allowedValues) {
    input = h('select', { class: 'input', name }, h('option', { value: '' }, '—'),
      question.allowedValues.map((value) => h('option', { value }, value)));
  } else if (question.type === 'date') {
    input = h('input', { class: 'input', type: 'date', name });
  } else if (question.type === 'dollar') {
    input = h('input', { class: 'input', type: 'text', inputmode: 'decimal', placeholder: '1500.00', name });
  } else {
    input = h('input', { class: 'input', type: 'text', name });
  }
  input.setAttribute('data-testid', `answer-${name}`);
  const reason = h('input', { class: 'input', type: 'text', placeholder: 'Why it cannot be answered', hidden: true,
    'data-testid': `cannot-reason-${name}` });
  const cannot = h('input', { type: 'checkbox', 'data-testid': `cannot-${name}`, onchange: () => {
    reason.hidden = !cannot.checked;
    input.disabled = cannot.checked;
  } });
  const value = () => {
    if (cannot.checked) return reason.value.trim() ? `${CANNOT}${reason.value.trim()}` : CANNOT;
    return input.value === '' ? null : input.value;
  };
  const field = h('div', { class: 'field', 'data-question': name,
    'data-when-field': question.when ? question.when.field : null,
    'data-when-equals': question.when ? question.when.equals : null },
    h('span', { class: 'field-label' }, `${question.label}${question.required ? ' *' : ''}`),
    h('span', { class: 'small muted' }, question.description,
      question.when ? ` (asked when ${question.when.field} is ${question.when.equals})` : ''),
    input, h('label', { class: 'check small' }, cannot, 'Cannot answer'), reason,
    h('span', { class: 'small text-failure', 'data-testid': `answer-error-${name}` }));
  return { name, field, value };
}

/** `#/queue/{taskId}`: the call sheet beside the form. */
export async function renderTask(taskId, query) {
  const ticket = beginView();
  takeToken(query, `/queue/${encodeURIComponent(taskId)}`);
  if (!operatorToken()) return show(signInForm());
  let sheet;
  try {
    sheet = await call('GET', `tasks/${encodeURIComponent(taskId)}`);
  } catch (error) {
    return show(error.status === 401 || error.status === 403 ? signInForm(error) : errorBox(error));
  }
  if (!isCurrent(ticket)) return;
  const status = h('div', { 'data-testid': 'task-status' });
  const say = (node) => status.replaceChildren(node);
  const act = async (path, body, after) => {
    try {
      const task = await call('POST', `tasks/${encodeURIComponent(taskId)}/${path}`, body);
      if (after) after(task);
      else renderTask(taskId, new URLSearchParams());
    } catch (error) {
      for (const [field, why] of Object.entries((error.body && error.body.details) || {})) {
        const slot = document.querySelector(`[data-testid="answer-error-${CSS.escape(field)}"]`);
        if (slot) slot.textContent = why;
      }
      say(errorBox(error));
    }
  };
  const questions = sheet.questions.map(questionInput);
  const dialed = h('input', { class: 'input', type: 'text', value: sheet.phoneNumber || '', 'data-testid': 'call-phone' });
  const notes = h('textarea', { class: 'input', rows: 3, 'data-testid': 'call-notes', placeholder: 'What the representative said' });
  const reference = h('input', { class: 'input', type: 'text', 'data-testid': 'call-reference' });
  const representative = h('input', { class: 'input', type: 'text', 'data-testid': 'call-representative' });
  const code = h('select', { class: 'input', 'data-testid': 'give-up-code' }, GIVE_UP_CODES.map((c) => h('option', { value: c }, c)));
  const open = sheet.state === 'open' || sheet.state === 'claimed';
  const complete = () => {
    const answers = {};
    for (const question of questions) {
      const value = question.value();
      if (value !== null) answers[question.name] = value;
    }
    const call = { phoneNumber: dialed.value.trim() };
    if (notes.value.trim()) call.notes = notes.value.trim();
    if (reference.value.trim()) call.referenceNumber = reference.value.trim();
    if (representative.value.trim()) call.representativeName = representative.value.trim();
    act('complete', { answers, call }, (task) => say(h('div', { class: 'notice notice-success', 'data-testid': 'task-done' },
      `Task ${task.state}. The request ends with these answers; its webhook goes out as always.`)));
  };
  const actions = open ? h('p', { class: 'head-actions' },
    h('button', { type: 'button', class: 'button', 'data-testid': 'claim', onclick: () => act('claim') },
      sheet.state === 'claimed' ? 'Renew claim' : 'Claim'),
    sheet.state === 'claimed'
      ? h('button', { type: 'button', class: 'button button-quiet', 'data-testid': 'release', onclick: () => act('release') }, 'Release')
      : null) : null;
  show(
    h('div', { class: 'page-head' },
      h('div', {}, h('div', { class: 'crumbs' }, h('a', { href: '#/queue' }, 'Work queue'), ' / ', sheet.taskId),
        h('h1', {}, `${sheet.payerName || 'Payer'}: ${sheet.reason}`),
        h('div', { class: 'subline' }, h('span', { 'data-testid': 'task-state' }, sheet.state),
          sheet.claimedBy ? ` · claimed by ${sheet.claimedBy} until ${time(sheet.claimExpiresAt)}` : '',
          ` · opened ${time(sheet.openedAt)} · expires ${time(sheet.expiresAt)}`)),
      actions),
    status,
    h('div', { class: 'queue-grid' },
      h('div', {},
        section('Call sheet', { 'data-testid': 'call-sheet' },
          facts([['Payer', sheet.payerName], ['Dial', sheet.phoneNumber], ['Request', sheet.requestId],
            ['Account', sheet.accountId], ['Schema', sheet.schemaId]])),
        section('Read out', {}, h('table', { class: 'table table-compact table-inputs' }, h('tbody', {},
          Object.entries(sheet.inputs).map(([key, value]) => h('tr', {}, h('th', {}, key), h('td', {}, value)))))),
        section('What the automated calls heard', {}, sheet.calls.length ? sheet.calls.map((c) => h('div', { class: 'queue-call' },
          h('strong', {}, `Call ${c.call}`), ` · ${time(c.placedAt)} · ${c.disposition || ''}`,
          c.failure ? h('p', { class: 'text-failure small' }, c.failure) : null,
          c.summary ? h('p', {}, c.summary) : null,
          c.transcript ? h('details', {}, h('summary', {}, 'Transcript'), h('pre', { class: 'transcript' }, c.transcript)) : null))
          : empty('No call so far.'))),
      open ? section('Answers', { 'data-testid': 'task-form' },
        h('form', { class: 'queue-form', onsubmit: (event) => { event.preventDefault(); complete(); } },
          questions.map((q) => q.field),
          h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Number dialed'), dialed),
          h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Representative'), representative),
          h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Reference number'), reference),
          h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Notes (the call\'s summary)'), notes),
          h('p', { class: 'head-actions' },
            h('button', { type: 'submit', class: 'button button-primary', 'data-testid': 'complete' }, 'Complete')),
          h('p', { class: 'head-actions' }, code,
            h('button', { type: 'button', class: 'button', 'data-testid': 'give-up',
              onclick: () => act('give-up', { errorCode: code.value }) }, 'Give up'))))
        : section('Closed', {}, h('p', {}, `This task is ${sheet.state}.`), badge(sheet.state.toUpperCase()))));
}
