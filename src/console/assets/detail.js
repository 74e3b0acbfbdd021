// One request: header, the call-flow timeline (steps linked by triggeredBy, calls in placement order with
// redials grouped in their step), the results table tracing each answer to its call, step and schema
// (service-interface 2.6 rule 5), the payer lookup decision, the webhook delivery log and the inputs.

import { adminPost, consoleGet, localUrl, prefill, session } from './api.js';
import {
  badge, beginView, duration, empty, errorBox, every, facts, h, isCannotAnswer, isCurrent, mono, phone, section,
  show, time, title,
} from './ui.js';

const REFRESH_MS = 2000;

export async function renderDetail(id) {
  const ticket = beginView();
  let openTranscripts = new Set();
  const load = async () => {
    let data;
    try {
      data = await consoleGet(`requests/${encodeURIComponent(id)}`);
    } catch (error) {
      if (isCurrent(ticket)) show(crumbs(id), errorBox(error));
      return null;
    }
    if (!isCurrent(ticket)) return null;
    // The voice-platform panel is an extra; a failure to read it leaves the rest of the view intact.
    data.voice = await consoleGet(`requests/${encodeURIComponent(id)}/voice`).catch(() => null);
    if (!isCurrent(ticket)) return null;
    const scroll = window.scrollY;
    show(view(data, openTranscripts));
    window.scrollTo(0, scroll);
    return data.request;
  };
  const request = await load();
  if (request && request.state === 'PROCESSING') {
    let busy = false;
    every(REFRESH_MS, async () => {
      if (busy) return;
      busy = true;
      openTranscripts = new Set([...document.querySelectorAll('details.transcript[open]')].map((d) => d.dataset.call));
      const fresh = await load();
      busy = false;
      // Terminal: a new view ticket stops this timer and leaves the screen as it is.
      if (fresh && fresh.state !== 'PROCESSING') beginView();
    });
  }
}

const crumbs = (id) => h('div', { class: 'crumbs' }, h('a', { href: '#/requests' }, 'Requests'), ' / ', mono(id));

function view({ request: r, schemas, webhook, voice, electronic, callCosts }, openTranscripts) {
  const steps = r.callSteps || [];
  // Every ended call's price comes with the detail (the read prices only contributing calls).
  const calls = callsOf(r).map((c) => ({ ...c, cost: (callCosts || {})[c.call] ?? c.cost }));
  const schemaName = (schemas[r.schemaId] && schemas[r.schemaId].name) || r.schemaId;
  const live = r.state === 'PROCESSING';
  return h('div', { class: 'detail', 'data-testid': 'request-detail', 'data-request-id': r.requestId, 'data-state': r.state },
    crumbs(r.requestId),
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', {}, schemaName, ' ', badge(r.state, { 'data-testid': 'request-state' })),
        h('div', { class: 'subline' },
          mono(r.requestId, { 'data-testid': 'request-id' }),
          h('span', { class: 'sep' }, '·'),
          'batch ', h('a', { href: `#/batches/${encodeURIComponent(r.requestBatchId)}`, class: 'mono', 'data-testid': 'batch-link' }, r.requestBatchId),
          live ? [h('span', { class: 'sep' }, '·'), h('span', { class: 'live-note' }, h('span', { class: 'dot dot-live' }), 'refreshing every 2 s')] : null)),
      session().mode === 'token' ? h('div', { class: 'head-actions' },
        h('button', { type: 'button', class: 'button', 'data-testid': 'create-similar', onclick: () => {
          prefill({ schemaId: r.schemaId, inputs: r.inputs });
          location.hash = `#/new?schemaId=${encodeURIComponent(r.schemaId)}`;
        } }, 'New request like this')) : null),
    kpis(r, steps, calls),
    h('div', { class: 'detail-grid' },
      h('div', { class: 'detail-main' },
        r.error ? failure(r.error) : null,
        timeline(r, steps, calls, schemas, openTranscripts),
        results(r, steps, calls, schemas, electronic)),
      h('aside', { class: 'detail-side' },
        requestFacts(r, schemas),
        payerLookup(r.payerLookup),
        voicePanel(voice),
        webhookLog(webhook, r),
        callNotes(r),
        inputs(r.inputs))));
}

function kpis(r, steps, calls) {
  const kpi = (label, value, extra = {}) => h('div', { class: 'kpi', ...extra }, h('div', { class: 'kpi-label' }, label), h('div', { class: 'kpi-value' }, value));
  return h('div', { class: 'kpis' },
    kpi('Created (UTC)', time(r.dateCreated)),
    kpi('Due', r.dueDate ? r.dueDate.slice(0, 10) : '—'),
    kpi('Completed (UTC)', r.completedAt ? time(r.completedAt) : '—'),
    kpi('Modality', r.modality ? r.modality.replace(/_/g, ' ') : 'not dispatched'),
    kpi('Steps', String(steps.length)),
    kpi('Calls', String(calls.length), { 'data-testid': 'call-count' }),
    costKpi(r.cost, r.state));
}

/** What the request cost: the total, with the two channels under it; "so far" while it runs. */
function costKpi(cost, state) {
  if (!cost) return null;
  const so = state === 'PROCESSING' ? ' so far' : '';
  return h('div', {
    class: 'kpi', 'data-testid': 'request-cost', 'data-amount': cost.amount, 'data-calls': cost.calls, 'data-electronic': cost.electronic,
    title: `Calls $${cost.calls} · electronic $${cost.electronic}`,
  },
  h('div', { class: 'kpi-label' }, `Cost${so} (${cost.currency})`),
  h('div', { class: 'kpi-value' }, `$${cost.amount}`),
  h('div', { class: 'muted small' }, `calls $${cost.calls} · electronic $${cost.electronic}`));
}

/** Calls in placement order: `contributingCalls` merged with `attemptDetails` (disposition, times). On a
 * FAILURE there are no contributing calls, so the attempts describe what was dialed, and the top-level
 * call fields (which describe the first step's last attempt, 2.4) fill in that attempt. */
function callsOf(r) {
  const attempts = new Map((r.attemptDetails || []).map((a) => [a.call, a]));
  const contributing = r.contributingCalls || [];
  if (contributing.length) {
    return contributing.map((c) => ({ ...attempts.get(c.call), ...c, to: c.to || r.to })).sort((a, b) => a.call - b.call);
  }
  const calls = [...attempts.values()].sort((a, b) => a.call - b.call);
  const first = (r.callSteps || [])[0];
  const described = first && calls.filter((c) => c.callStep === first.key).pop();
  if (described) {
    for (const key of ['callDuration', 'callSummary', 'transcript', 'recordingDownloadUrl']) {
      if (r[key] !== undefined) described[key] = r[key];
    }
  }
  return calls;
}

function failure(error) {
  return h('section', { class: 'card card-failure', 'data-testid': 'request-error' },
    h('h2', { class: 'card-title' }, 'Request failed'),
    h('div', { class: 'failure-code' }, mono(error.errorCode), h('span', { class: 'muted' }, ` · ${error.errorCategory}`)),
    h('p', {}, error.errorMessage));
}

// ---- call flow ---------------------------------------------------------------------------------------

function timeline(r, steps, calls, schemas, openTranscripts) {
  if (!steps.length) {
    const why = r.state === 'PROCESSING'
      ? 'The call flow appears here once the request is terminal.'
      : r.modality === 'digital_only'
        ? 'Answered electronically: no call was placed.'
        : 'No call steps were recorded for this request.';
    return section('Call flow', { 'data-testid': 'timeline' }, empty(why), r.resultSummary ? h('p', {}, r.resultSummary) : null);
  }
  const byKey = new Map(steps.map((s, i) => [s.key, { ...s, index: i + 1 }]));
  const depth = (step, seen = new Set()) => {
    if (!step.triggeredBy || seen.has(step.key) || !byKey.has(step.triggeredBy)) return 0;
    seen.add(step.key);
    return 1 + depth(byKey.get(step.triggeredBy), seen);
  };
  return section('Call flow', { 'data-testid': 'timeline' },
    h('ol', { class: 'steps' }, [...byKey.values()].map((step) => {
      const stepCalls = calls.filter((c) => c.callStep === step.key);
      const parent = step.triggeredBy && byKey.get(step.triggeredBy);
      const schema = schemas[step.schemaId];
      return h('li', {
        class: `step step-${(step.state || '').toLowerCase()} ${parent ? 'step-triggered' : ''}`,
        id: `step-${step.key}`,
        'data-testid': 'step',
        'data-step-key': step.key,
        'data-step-schema': step.schemaId,
        'data-step-state': step.state,
        'data-triggered-by': step.triggeredBy || '',
        style: { '--depth': String(depth(step)) },
      },
      parent ? h('div', { class: 'trigger', 'data-testid': 'triggered-by' },
        h('span', { class: 'trigger-arrow', 'aria-hidden': 'true' }, '↳'),
        'Follow-up opened by ', h('a', { href: `#step-${parent.key}`, onclick: jump(`step-${parent.key}`) }, `Step ${parent.index} · ${parent.name}`)) : null,
      h('div', { class: 'step-head' },
        h('span', { class: 'step-index' }, `Step ${step.index}`),
        h('h3', {}, step.name || (schema && schema.name) || step.schemaId),
        badge(step.state),
        h('span', { class: 'step-meta' }, mono(step.key), ' · ', mono(step.schemaId))),
      progress(step.fieldsCaptured, step.fieldsRequired),
      step.missingFields && step.missingFields.length
        ? h('div', { class: 'missing-line' }, h('span', { class: 'muted' }, 'Not captured: '),
          step.missingFields.map((f) => h('span', { class: 'tag tag-missing' }, labelOf(f, schemas, step.schemaId))))
        : null,
      step.error ? h('div', { class: 'step-error', 'data-testid': 'step-error' },
        mono(step.error.errorCode), ' ', step.error.errorMessage) : null,
      stepCalls.length > 1 ? h('div', { class: 'redial-note', 'data-testid': 'redial-group' },
        `${stepCalls.length} calls in this step: the step was redialed until it reached a representative.`) : null,
      stepCalls.length
        ? h('ol', { class: 'calls' }, stepCalls.map((c, i) => callCard(r, c, i, stepCalls.length, schemas, step, openTranscripts)))
        : h('p', { class: 'muted small' }, 'No call of this step is on record.'));
    })));
}

function progress(captured, required) {
  const share = required ? Math.min(1, captured / required) : 0;
  return h('div', { class: 'progress-line' },
    h('div', { class: 'progress', role: 'progressbar', 'aria-valuenow': captured, 'aria-valuemax': required },
      h('div', { class: 'progress-fill', style: { width: `${Math.round(share * 100)}%` } })),
    h('span', { class: 'small' }, `${captured} of ${required} required fields captured`));
}

function callCard(r, c, position, total, schemas, step, openTranscripts) {
  const captured = c.fieldsCaptured || [];
  const disposition = c.disposition;
  return h('li', { class: 'call', id: `call-${c.call}`, 'data-testid': 'call', 'data-call': c.call, 'data-call-step': c.callStep },
    h('div', { class: 'call-head' },
      h('span', { class: 'call-no' }, `Call ${c.call}`),
      total > 1 ? h('span', { class: 'tag' }, position === 0 ? `Attempt 1 of ${total}` : `Redial · attempt ${position + 1} of ${total}`) : null,
      disposition ? h('span', { class: `tag disposition-${disposition}` }, title(disposition)) : null,
      h('span', { class: 'call-meta' },
        h('span', { title: 'Duration' }, duration(c.callDuration)),
        h('span', { title: 'Number dialed', 'data-testid': 'call-to' }, phone(c.to)),
        c.cost !== undefined ? h('span', { title: 'What this call cost (USD)', 'data-testid': 'call-cost', 'data-call': c.call, 'data-cost': c.cost }, `$${c.cost}`) : null,
        c.placedAt ? h('span', { title: 'Placed at (UTC)' }, time(c.placedAt)) : null)),
    c.callSummary ? h('p', { class: 'call-summary' }, c.callSummary) : null,
    captured.length ? h('div', { class: 'captured' }, h('span', { class: 'muted small' }, `Captured ${captured.length}: `),
      captured.map((f) => h('span', { class: 'tag tag-field', title: f }, labelOf(f, schemas, step.schemaId)))) : null,
    c.recordingDownloadUrl ? h('div', { class: 'recording' },
      h('audio', { controls: true, preload: 'none', src: localUrl(c.recordingDownloadUrl), 'data-testid': 'recording' })) : null,
    c.transcript ? h('details', { class: 'transcript', 'data-call': c.call, open: openTranscripts.has(String(c.call)) },
      h('summary', {}, 'Transcript'), h('pre', {}, c.transcript)) : null);
}

function jump(id) {
  return (event) => {
    event.preventDefault();
    const target = document.getElementById(id);
    if (!target) return;
    target.scrollIntoView({ behavior: 'smooth', block: 'center' });
    target.classList.remove('flash');
    void target.offsetWidth;
    target.classList.add('flash');
  };
}

// ---- results -----------------------------------------------------------------------------------------

function labelOf(field, schemas, preferred) {
  const find = (schema) => schema && (schema.resultsFields || []).find((f) => f.name === field);
  const hit = find(schemas[preferred]) || Object.values(schemas).map(find).find(Boolean);
  return hit ? hit.label : field;
}

// An electronically filled field is traced to its clearinghouse transaction and the element of the
// answer behind it, where a phone answer is traced to its call and step.
function electronicSource(electronic, field) {
  const element = electronic && electronic.fields && electronic.fields[field];
  return element ? { element, transactionId: electronic.transactionId || '', channel: electronic.channel || 'electronic' } : null;
}

function electronicCell(source) {
  return h('span', { 'data-testid': 'electronic-source' }, source.channel, ' ', mono(source.transactionId, { class: 'mono small muted' }));
}

function results(r, steps, calls, schemas, electronic) {
  const sources = r.resultSources || {};
  const rows = Object.entries(r.results || {}).map(([field, value]) => {
    const number = sources[field];
    const call = calls.find((c) => c.call === number);
    const step = call && steps.find((s) => s.key === call.callStep);
    const digital = number ? null : electronicSource(electronic, field);
    return { field, value, number, step, digital, schemaId: step ? step.schemaId : (digital ? r.schemaId : '') };
  }).sort((a, b) => (a.number ?? 1e9) - (b.number ?? 1e9) || a.field.localeCompare(b.field));
  const missing = r.missingFields || [];
  const cannot = rows.filter((row) => isCannotAnswer(row.value)).length;
  const summary = [`${rows.length} field${rows.length === 1 ? '' : 's'}`];
  if (cannot) summary.push(`${cannot} cannot answer`);
  if (missing.length) summary.push(`${missing.length} missing`);
  return section('Results', { 'data-testid': 'results' },
    h('p', { class: 'muted small' }, summary.join(' · '), ' — each answer traced through resultSources → contributingCalls → callSteps, or to the electronic transaction and the element that fed it.'),
    electronic ? h('p', { class: 'muted small', 'data-testid': 'electronic-transaction', 'data-outcome': electronic.outcome || '' },
      `Electronic (${electronic.channel || 'channel'}): ${electronic.outcome || ''}`,
      electronic.transactionId ? [' · transaction ', mono(electronic.transactionId)] : null) : null,
    rows.length ? h('table', { class: 'table table-results' },
      h('thead', {}, h('tr', {}, ['Field', 'Value', 'Call', 'Step', 'Schema'].map((c) => h('th', {}, c)))),
      h('tbody', {}, rows.map((row) => h('tr', {
        class: isCannotAnswer(row.value) ? 'row-cannot' : '',
        'data-testid': 'result-row',
        'data-field': row.field,
        'data-source-call': row.number ?? '',
        'data-source-step': row.step ? row.step.key : '',
        'data-source-schema': row.schemaId,
        'data-source-transaction': row.digital ? row.digital.transactionId : '',
        'data-source-element': row.digital ? row.digital.element : '',
      },
      h('td', {}, h('div', {}, labelOf(row.field, schemas, row.schemaId)), h('div', { class: 'mono small muted' }, row.field)),
      h('td', { class: 'value' }, valueCell(row.value)),
      h('td', { class: 'nowrap' }, row.number ? h('a', { href: `#call-${row.number}`, onclick: jump(`call-${row.number}`) }, `Call ${row.number}`) : row.digital ? electronicCell(row.digital) : h('span', { class: 'muted' }, r.modality && r.modality !== 'phone_only' ? 'electronic' : '—')),
      h('td', { class: 'nowrap' }, row.step ? mono(row.step.key) : row.digital ? mono(row.digital.element, { class: 'mono small' }) : '—'),
      h('td', { class: 'nowrap' }, row.schemaId ? mono(row.schemaId) : '—'))))) : empty(r.state === 'PROCESSING' ? 'No results yet.' : 'No results.'),
    missing.length ? h('div', { class: 'missing', 'data-testid': 'missing-fields' },
      h('h3', {}, `Missing fields (${missing.length})`),
      h('ul', { class: 'missing-list' }, missing.map((f) => h('li', { 'data-testid': 'missing-field', 'data-field': f },
        h('span', { class: 'tag tag-missing' }, labelOf(f, schemas, r.schemaId)), ' ', mono(f, { class: 'mono small muted' }))))) : null);
}

function valueCell(value) {
  if (!isCannotAnswer(value)) return String(value);
  const reason = value.replace(/^CANNOT ANSWER\s*-?\s*/, '');
  return h('span', { class: 'cannot', 'data-testid': 'cannot-answer' }, h('span', { class: 'tag tag-cannot' }, 'Cannot answer'), ' ', reason);
}

// ---- side column -------------------------------------------------------------------------------------

function requestFacts(r, schemas) {
  const schema = schemas[r.schemaId];
  return section('Request', {}, facts([
    ['Schema', h('span', {}, mono(r.schemaId), schema ? h('span', { class: 'muted' }, ` v${schema.version}`) : null)],
    ['Request type', r.requestType],
    ['Internal id', r.internalId ? mono(r.internalId) : null],
    ['Internal tag', r.internalTag ? mono(r.internalTag) : null],
    ['Number dialed', r.to ? phone(r.to) : null],
    ['Call from', r.callFromNumber ? phone(r.callFromNumber) : null],
    ['Script version', r.scriptVersion ? mono(String(r.scriptVersion)) : null],
    ['Data completeness', r.data_completeness],
  ]));
}

/** The calls as the voice platform knows them, and why an attempt is waiting (calling hours or a slot). */
function voicePanel(voice) {
  if (!voice || !voice.platform) return null;
  const reason = { calling_hours: "outside the payer's calling hours", slot: 'every call slot is taken' };
  return section('Voice platform', { 'data-testid': 'voice-platform', 'data-platform': voice.platform },
    voice.waiting.map((w) => h('p', { class: 'decision', 'data-testid': 'call-waiting', 'data-reason': w.reason },
      `Call ${w.call ?? ''} is waiting: ${reason[w.reason] || w.reason} (since ${time(w.since)}).`)),
    voice.slots ? h('p', { class: 'muted small' }, `Call slots in use: ${voice.slots.inUse} of ${voice.slots.limit}`) : null,
    voice.calls.length
      ? h('table', { class: 'table table-compact' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Call'), h('th', {}, 'Platform'), h('th', {}, 'Platform call id'), h('th', {}, 'Recording'))),
        h('tbody', {}, voice.calls.map((c) => h('tr', { 'data-testid': 'platform-call', 'data-call': c.call },
          h('td', {}, String(c.call)),
          h('td', {}, c.platform),
          h('td', {}, c.platformCallId ? mono(c.platformCallId) : h('span', { class: 'muted' }, 'being created')),
          h('td', {}, c.recordingKept ? 'kept' : '—')))))
      : h('p', { class: 'muted small' }, 'No call handed to the platform yet.'));
}

function payerLookup(lookup) {
  if (!lookup) return null;
  const source = lookup.phoneNumberSource;
  const matched = lookup.matchedPayerName ? `“${lookup.matchedPayerName}”` : 'the payer';
  const decision = source === 'input'
    ? 'Dialed the number supplied in inputs.phoneNumber.'
    : source === 'phoneBook'
      ? `Dialed the account's phone-book override for ${matched}.`
      : `Dialed the directory number matched for ${matched}.`;
  return section('Payer lookup', { 'data-testid': 'payer-lookup', 'data-source': source },
    h('p', { class: 'decision' }, decision),
    facts([
      ['Payer name given', lookup.inputPayerName],
      ['Phone given', lookup.inputPhoneNumber ? phone(lookup.inputPhoneNumber) : h('span', { class: 'muted' }, 'none')],
      ['Matched payer', lookup.matchedPayerName],
      ['Matched phone', lookup.matchedPayerPhone ? phone(lookup.matchedPayerPhone) : null],
      ['Number to use', phone(lookup.phoneNumberToUse)],
      ['Source', mono(source)],
    ]));
}

/** Operators (the admin token) can send a terminal request's webhook again, outside its rounds. */
function redeliverButton(r) {
  if (session().mode !== 'admin' || r.state === 'PROCESSING') return null;
  const note = h('span', { class: 'muted small', 'data-testid': 'redeliver-note' });
  const button = h('button', { type: 'button', class: 'button', 'data-testid': 'redeliver', onclick: async () => {
    button.disabled = true;
    note.textContent = ' Sending…';
    try {
      await adminPost(`webhook-deliveries/${encodeURIComponent(r.requestId)}/redeliver`);
      note.textContent = ' Sent again; the attempt appears below.';
      setTimeout(() => renderDetail(r.requestId), 1000);
    } catch (error) {
      note.textContent = ` ${error.message}`;
      button.disabled = false;
    }
  } }, 'Send again');
  return h('p', {}, button, note);
}

function webhookLog(webhook, r) {
  const state = r.state;
  if (!webhook) {
    return section('Webhook', { 'data-testid': 'webhook' }, h('p', { class: 'muted small' }, state === 'PROCESSING'
      ? 'Sent when the request becomes terminal.'
      : 'No webhook: neither the request nor the account has a webhook URL.'));
  }
  return section('Webhook', { 'data-testid': 'webhook', 'data-status': webhook.status },
    facts([
      ['Status', h('span', { class: `tag delivery-${webhook.status}` }, title(webhook.status))],
      ['URL', mono(webhook.url, { class: 'mono break' })],
      ['Next round', webhook.nextAttemptAt ? `${webhook.nextRound} at ${time(webhook.nextAttemptAt)}` : null],
    ]),
    redeliverButton(r),
    webhook.attempts.length ? h('table', { class: 'table table-compact' },
      h('thead', {}, h('tr', {}, ['Time', 'Round', 'Result', 'Latency'].map((c) => h('th', {}, c)))),
      h('tbody', {}, webhook.attempts.map((a) => h('tr', { 'data-testid': 'webhook-attempt', 'data-status-code': a.statusCode ?? '' },
        h('td', { class: 'nowrap', title: `${time(a.at)} UTC` }, time(a.at).slice(11)),
        h('td', { class: 'nowrap', title: 'round · attempt within the round' }, a.redelivery ? `resent ${a.redelivery} · ${a.attempt}` : `${a.round} · ${a.attempt}`),
        h('td', {}, a.statusCode ? h('span', { class: `nowrap ${a.statusCode < 300 ? 'text-success' : 'text-failure'}` }, `HTTP ${a.statusCode}`) : h('span', { class: 'text-failure' }, a.error || 'error')),
        h('td', { class: 'nowrap' }, `${a.latencyMs} ms`))))) : h('p', { class: 'muted small' }, 'No attempt yet.'));
}

function callNotes(r) {
  if (!r.callAuditSummary && !r.transcriptPostCall) return null;
  return section('First call notes', {},
    r.callAuditSummary ? h('p', { class: 'small' }, r.callAuditSummary) : null,
    r.transcriptPostCall ? h('details', { class: 'transcript' }, h('summary', {}, 'Post-call notes'), h('pre', {}, r.transcriptPostCall)) : null);
}

function inputs(values) {
  const entries = Object.entries(values || {});
  return section('Inputs', {},
    h('table', { class: 'table table-compact table-inputs' }, h('tbody', {}, entries.map(([key, value]) =>
      h('tr', {}, h('td', { class: 'mono small' }, key), h('td', { class: 'break' }, String(value)))))));
}
