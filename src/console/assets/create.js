// "New request": a form built from the schema's required and optional inputs (GET /v1/schemas,
// GET /v1/schemas/{id}/required-inputs) that POSTs /v1/requests as a client would, and shows an
// INVALID_INPUTS answer field by field next to the inputs it names.

import { apiGet, apiPost, session, takePrefill } from './api.js';
import { beginView, empty, errorBox, h, isCurrent, mono, show } from './ui.js';

const SCENARIOS = [
  ['success', 'success: one call, every field'],
  ['redial', 'redial: two calls in one step'],
  ['follow_up', 'follow_up: a second, triggered step'],
  ['partial', 'partial: the follow-up step fails'],
  ['cannot_answer', 'cannot_answer: one CANNOT ANSWER value'],
  ['failure:IVR_FAILURE', 'failure:IVR_FAILURE'],
  ['failure:MEMBER_NOT_FOUND', 'failure:MEMBER_NOT_FOUND'],
  ['digital', 'digital: electronic only'],
  ['digital_plus_phone', 'digital_plus_phone'],
  ['stuck', 'stuck: stays PROCESSING'],
];

/** Plausible demo values, so a demo can fill the form in one click. */
const EXAMPLES = {
  payerName: 'UHC', groupNumber: 'GRP20417', memberId: 'W123456789', patientFirstName: 'Jane',
  patientLastName: 'Doe', patientDateOfBirth: '1980-04-12', dateOfService: '2026-10-01',
  billingProviderNpi: '1234567890', billingProviderTaxId: '12-3456789', phoneNumber: '(800) 555-0100',
};

const hint = (name) => (/date/i.test(name) ? 'YYYY-MM-DD'
  : /phonenumber/i.test(name) ? 'U.S. phone number'
    : /npi$/i.test(name) ? '10 digits'
      : /taxid$/i.test(name) ? '9 digits' : '');

export async function renderCreate(query) {
  const ticket = beginView();
  const current = session();
  const head = h('div', { class: 'page-head' }, h('div', {}, h('h1', {}, 'New request'),
    h('span', { class: 'muted' }, 'POST /v1/requests with the inputs the schema asks for.')));
  if (current.mode === 'admin') {
    return show(head, h('div', { class: 'notice' },
      'Creating a request needs an API credential: requests are booked and signed for the key that created them. ',
      'Sign out and sign in with an API key and secret to use this form.'));
  }
  let schemas;
  try {
    schemas = (await apiGet('/v1/schemas')).schemas;
  } catch (error) {
    if (isCurrent(ticket)) show(head, errorBox(error));
    return;
  }
  if (!isCurrent(ticket)) return;
  if (!schemas.length) return show(head, empty('No schema is provisioned to this account.'));
  const chosen = schemas.some((s) => s.schemaId === query.get('schemaId')) ? query.get('schemaId') : schemas[0].schemaId;
  let inputs;
  try {
    inputs = await apiGet(`/v1/schemas/${encodeURIComponent(chosen)}/required-inputs`);
  } catch (error) {
    if (isCurrent(ticket)) show(head, errorBox(error));
    return;
  }
  if (!isCurrent(ticket)) return;
  const given = takePrefill();
  show(head, form(schemas, chosen, inputs, current.who || {}, given && given.schemaId === chosen ? given.inputs : {}));
}

function form(schemas, chosen, inputs, who, given) {
  const required = inputs.requiredInputs.fields;
  const optional = inputs.optionalInputs.fields;
  const rows = h('div', { class: 'input-rows', 'data-testid': 'input-rows' });
  const banner = h('div', {});
  const result = h('div', {});
  const added = new Set();

  const row = (name, isRequired) => {
    const control = h('input', { name, 'data-input': name, placeholder: hint(name), autocomplete: 'off' });
    const remove = isRequired ? null : h('button', {
      type: 'button', class: 'button button-quiet button-small', title: 'Remove', onclick: () => {
        element.remove();
        added.delete(name);
        paintOptional();
      },
    }, 'Remove');
    const element = h('div', { class: 'input-row', 'data-testid': 'input-row', 'data-field': name },
      h('label', { class: 'input-name' }, mono(name), isRequired ? h('span', { class: 'required', title: 'required' }, ' *') : h('span', { class: 'muted small' }, ' optional')),
      h('div', { class: 'input-control' }, control, h('p', { class: 'field-error', 'data-testid': 'field-error', 'data-field': name, hidden: true })),
      h('div', {}, remove));
    added.add(name);
    return element;
  };
  const addOptional = (name) => {
    if (added.has(name)) return rows.querySelector(`[data-field="${CSS.escape(name)}"]`);
    const element = row(name, false);
    rows.append(element);
    paintOptional();
    return element;
  };
  const optionalPick = h('select', { 'aria-label': 'Add an optional input', 'data-testid': 'add-optional' });
  const paintOptional = () => {
    const left = optional.filter((name) => !added.has(name));
    optionalPick.replaceChildren(h('option', { value: '' }, left.length ? `Add an optional input (${left.length})…` : 'No optional input left'),
      left.map((name) => h('option', { value: name }, name)));
    optionalPick.disabled = !left.length;
  };
  optionalPick.addEventListener('change', () => {
    if (optionalPick.value) addOptional(optionalPick.value).querySelector('input').focus();
  });
  rows.append(...required.map((name) => row(name, true)));
  for (const [name, value] of Object.entries(given)) {
    if (name === 'sandboxScenario') continue;
    const target = added.has(name) ? rows.querySelector(`[data-field="${CSS.escape(name)}"]`) : addOptional(name);
    target.querySelector('input').value = value;
  }
  paintOptional();

  const scenario = who.environment === 'sandbox'
    ? h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'sandboxScenario'),
      h('select', { name: 'sandboxScenario', 'data-testid': 'sandbox-scenario' },
        (SCENARIOS.some(([value]) => value === given.sandboxScenario) || !given.sandboxScenario
          ? SCENARIOS : [[given.sandboxScenario, given.sandboxScenario], ...SCENARIOS])
          .map(([value, text]) => h('option', { value, selected: value === given.sandboxScenario }, text))))
    : null;
  const lookup = (who.features || []).includes('payer_phone_lookup');
  const option = (name, attrs = {}) => h('label', { class: 'field' }, h('span', { class: 'field-label' }, name), h('input', { name, ...attrs }));
  const check = (name, text) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name }), ' ', mono(name), ' ', h('span', { class: 'muted small' }, text));

  const element = h('form', { class: 'card create-form', 'data-testid': 'create-form', novalidate: true },
    h('div', { class: 'create-top' },
      h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Schema'),
        h('select', { name: 'schemaId', 'data-testid': 'schema-select', onchange: (event) => {
          location.hash = `#/new?schemaId=${encodeURIComponent(event.target.value)}`;
        } }, schemas.map((s) => h('option', { value: s.schemaId, selected: s.schemaId === chosen }, `${s.name} (${s.schemaId})`)))),
      scenario,
      h('button', { type: 'button', class: 'button button-quiet', onclick: () => {
        for (const [name, value] of Object.entries(EXAMPLES)) {
          if (name === 'phoneNumber' && lookup) continue;
          if (!added.has(name) && !optional.includes(name)) continue;
          const input = (added.has(name) ? rows.querySelector(`[data-field="${name}"]`) : addOptional(name)).querySelector('input');
          if (!input.value) input.value = value;
        }
      } }, 'Fill demo values')),
    h('h2', { class: 'card-title' }, 'Inputs ', h('span', { class: 'muted small' }, '* required')),
    banner,
    rows,
    h('div', { class: 'add-optional' }, optionalPick),
    h('details', { class: 'options' }, h('summary', {}, 'Request options'),
      h('div', { class: 'options-grid' },
        option('internalId', { placeholder: 'idempotency key' }),
        option('internalTag'),
        option('webhookUrl', { type: 'url', placeholder: 'https://…' }),
        lookup ? check('useMatchedPayerPhone', 'dial the directory number even when phoneNumber is given') : null,
        check('aiOnly', 'automated voice agent only'),
        check('onshoreOnly', 'US-based agents only'))),
    h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'button button-primary', 'data-testid': 'create-submit' }, 'Create request')),
    result);

  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    const values = {};
    for (const input of rows.querySelectorAll('input[data-input]')) values[input.name] = input.value;
    if (element.elements.sandboxScenario) values.sandboxScenario = element.elements.sandboxScenario.value;
    const body = { schemaId: chosen, inputs: values };
    for (const name of ['internalId', 'internalTag', 'webhookUrl']) {
      const value = element.elements[name].value.trim();
      if (value) body[name] = value;
    }
    for (const name of ['useMatchedPayerPhone', 'aiOnly', 'onshoreOnly']) {
      if (element.elements[name] && element.elements[name].checked) body[name] = true;
    }
    for (const slot of rows.querySelectorAll('.field-error')) slot.hidden = true;
    for (const r of rows.querySelectorAll('.input-row')) r.classList.remove('invalid');
    banner.replaceChildren();
    result.replaceChildren();
    try {
      const created = await apiPost('/v1/requests', body);
      result.replaceChildren(createdNotice(created));
    } catch (error) {
      banner.replaceChildren(...showErrors(error, addOptional));
    }
  });
  return element;
}

/** Puts each INVALID_INPUTS reason next to its input (adding the row if the key was not on the form). */
function showErrors(error, rowFor) {
  const details = error.body && error.body.details;
  if (!details) return [errorBox(error)];
  const problems = [
    ...(details.missingInputs || []).map((name) => [name, 'Required: this input is missing.']),
    ...Object.entries(details.invalidInputs || {}),
  ];
  for (const [name, reason] of problems) {
    const target = rowFor(name);
    target.classList.add('invalid');
    const slot = target.querySelector('.field-error');
    slot.textContent = reason;
    slot.hidden = false;
  }
  return [h('div', { class: 'notice notice-error', role: 'alert', 'data-testid': 'invalid-inputs' },
    h('strong', {}, 'INVALID_INPUTS'), ` ${problems.length} input${problems.length === 1 ? '' : 's'} need attention. `, error.message)];
}

function createdNotice(created) {
  const lookup = created.payerLookup;
  return h('div', { class: 'notice notice-success', 'data-testid': 'created' },
    h('strong', {}, 'Request created. '),
    h('a', { href: `#/requests/${encodeURIComponent(created.requestId)}`, 'data-testid': 'created-link' }, 'Open ', mono(created.requestId)),
    ' · batch ', h('a', { href: `#/batches/${encodeURIComponent(created.requestBatchId)}` }, mono(created.requestBatchId)),
    lookup ? h('div', { class: 'small' }, `Payer lookup: dialing ${lookup.phoneNumberToUse} (source ${lookup.phoneNumberSource}).`) : null);
}
