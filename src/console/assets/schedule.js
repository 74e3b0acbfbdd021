// The batch and schedule view: bookings per business day against the daily call capacity, and the
// requests of one batch.

import { consoleGet } from './api.js';
import { countChips, requestTable } from './list.js';
import { beginView, day, empty, errorBox, every, h, hashLink, isCurrent, mono, show } from './ui.js';

const DAYS = 15;

export async function renderSchedule() {
  const ticket = beginView();
  let schedule;
  try {
    schedule = await consoleGet('schedule', { days: DAYS });
  } catch (error) {
    if (isCurrent(ticket)) show(h('h1', {}, 'Schedule'), errorBox(error));
    return;
  }
  if (!isCurrent(ticket)) return;
  const capacity = schedule.dailyCallCapacity;
  const batchForm = h('form', { class: 'inline-form' },
    h('input', { name: 'batch', placeholder: 'requestBatchId', class: 'mono-input', 'aria-label': 'Batch id' }),
    h('button', { class: 'button', type: 'submit' }, 'Open batch'));
  batchForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = batchForm.elements.batch.value.trim();
    if (id) location.hash = `#/batches/${encodeURIComponent(id)}`;
  });
  const used = schedule.days.reduce((sum, d) => sum + d.booked, 0);
  show(
    h('div', { class: 'page-head' },
      h('div', {}, h('h1', {}, 'Schedule'),
        h('span', { class: 'muted' }, `Bookings per business day in ${schedule.timezone}, from today (${schedule.today}).`)),
      h('div', { class: 'head-actions' }, batchForm)),
    h('div', { class: 'kpis' },
      kpi('Daily call capacity', String(capacity)),
      kpi(`Booked, next ${schedule.days.length} business days`, String(used)),
      kpi('Free today', String(schedule.days[0] ? schedule.days[0].free : 0)),
      kpi('Environment', schedule.environment)),
    h('section', { class: 'card', 'data-testid': 'schedule' },
      h('h2', { class: 'card-title' }, 'Bookings against capacity'),
      h('div', { class: 'bars' },
        columns(schedule).map((column, i) => {
          if (column.holiday) {
            return h('div', { class: 'bar bar-holiday', 'data-testid': 'schedule-holiday', title: `${column.date}: ${column.holiday}` },
              h('div', { class: 'bar-count muted' }, '–'),
              h('div', { class: 'bar-track' }),
              h('div', { class: 'bar-label' }, h('span', { class: 'bar-weekday muted' }, 'Holiday'), h('span', {}, column.date.slice(5))));
          }
          const d = column;
          // The track is the day's capacity; the fill is what is booked on it.
          const load = capacity ? d.booked / capacity : 1;
          const level = load >= 1 ? 'full' : load >= 0.8 ? 'high' : 'ok';
          return h('div', {
            class: `bar ${i === 0 ? 'bar-today' : ''}`,
            'data-testid': 'schedule-day',
            'data-date': d.date,
            'data-booked': d.booked,
            'data-capacity': capacity,
            title: `${d.date}: ${d.booked} booked, ${d.free} free`,
          },
          h('div', { class: 'bar-count' }, String(d.booked)),
          h('div', { class: 'bar-track' }, h('div', { class: `bar-fill level-${level}`, style: { height: `${Math.min(1, load) * 100}%` } })),
          h('div', { class: 'bar-label' }, h('span', { class: 'bar-weekday' }, d.date === schedule.today ? 'Today' : d.weekday), h('span', {}, d.date.slice(5))));
        })),
      h('div', { class: 'legend' },
        h('span', {}, h('i', { class: 'swatch swatch-track' }), `capacity (${capacity} a day)`),
        h('span', {}, h('i', { class: 'swatch level-ok' }), 'booked, under 80%'),
        h('span', {}, h('i', { class: 'swatch level-high' }), '80% or more'),
        h('span', {}, h('i', { class: 'swatch level-full' }), 'full: new requests go to the next day')),
      schedule.holidays.length
        ? h('p', { class: 'muted small', 'data-testid': 'holidays' }, 'Skipped holidays: ',
          schedule.holidays.map((x, i) => [i ? ', ' : '', `${x.name} (${x.date})`]))
        : null),
    h('p', { class: 'muted small' },
      'Weekends and US federal holidays are not business days. A request is booked on the first business day with room; a batch POST that does not fit in one day is split into one batch per day.'),
  );
}

/** The business days in order, with each skipped holiday as a narrow column where it falls. */
function columns(schedule) {
  const holidays = [...schedule.holidays];
  const out = [];
  for (const day of schedule.days) {
    while (holidays.length && holidays[0].date < day.date) {
      const holiday = holidays.shift();
      out.push({ date: holiday.date, holiday: holiday.name });
    }
    out.push(day);
  }
  return out;
}

const kpi = (label, value) => h('div', { class: 'kpi' }, h('div', { class: 'kpi-label' }, label), h('div', { class: 'kpi-value' }, value));

export async function renderBatch(batchId) {
  const ticket = beginView();
  const body = h('div', {});
  show(
    h('div', { class: 'crumbs' }, h('a', { href: '#/schedule' }, 'Schedule'), ' / batch'),
    h('div', { class: 'page-head' }, h('div', {}, h('h1', {}, 'Batch'), mono(batchId, { 'data-testid': 'batch-id' }))),
    body);
  const load = async () => {
    let page;
    try {
      page = await consoleGet('requests', { requestBatchId: batchId, pageSize: 500 });
    } catch (error) {
      if (isCurrent(ticket)) body.replaceChildren(errorBox(error));
      return null;
    }
    if (!isCurrent(ticket)) return null;
    const due = [...new Set(page.requests.map((r) => day(r.dueDate)))];
    body.replaceChildren(
      h('div', { class: 'kpis' },
        kpi('Requests', String(page.requests.length) + (page.nextPageToken ? '+' : '')),
        kpi('Due', due.join(', ') || '—'),
        kpi('Processing', String(page.countsByState.PROCESSING || 0))),
      h('div', { class: 'chips' }, countChips(page.countsByState, null, page.countsComplete, (state) => {
        location.hash = hashLink('/requests', { requestBatchId: batchId, state });
      })),
      h('div', { class: 'card card-flush' }, page.requests.length ? requestTable(page.requests) : empty('No request of yours carries this batch id.')));
    return page;
  };
  const page = await load();
  if (page && (page.countsByState.PROCESSING || 0) > 0) every(2000, load);
}
