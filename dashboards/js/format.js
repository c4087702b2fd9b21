// Number and date formatting in the browser's locale.

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const percent = new Intl.NumberFormat(undefined, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });
const signedPercent = new Intl.NumberFormat(undefined, { style: 'percent', signDisplay: 'exceptZero', maximumFractionDigits: 1 });
const points = new Intl.NumberFormat(undefined, { signDisplay: 'exceptZero', maximumFractionDigits: 1 });

export const formatCount = (value) => integer.format(value);
export const formatRate = (value) => (value === null || value === undefined ? '—' : percent.format(value));

/** The change of a count against the previous period: "+12.5%", or null when undefined. */
export function countChange(now, before) {
  if (!before) return now ? { text: 'new', direction: 'up' } : null;
  const ratio = (now - before) / before;
  return { text: signedPercent.format(ratio), direction: ratio > 0 ? 'up' : ratio < 0 ? 'down' : 'flat' };
}

/** The change of a rate in percentage points: "+1.2 pts", or null when either is undefined. */
export function rateChange(now, before) {
  if (now === null || before === null || now === undefined || before === undefined) return null;
  const delta = (now - before) * 100;
  return { text: `${points.format(delta)} pts`, direction: delta > 0 ? 'up' : delta < 0 ? 'down' : 'flat' };
}

/** A bucket start ("2026-11-21T14:00:00+05:30") as a short label for the chart's axis. */
export function bucketLabel(t, interval) {
  const [date, time] = t.split('T');
  const [, month, day] = date.split('-');
  return interval === 'hour' ? `${time.slice(0, 5)}` : `${Number(day)} ${monthName(Number(month))}`;
}

/** A bucket start in full, for tooltips. */
export function bucketTitle(t, interval) {
  const [date, time] = t.split('T');
  return interval === 'hour' ? `${date} ${time.slice(0, 5)} (${time.slice(-6)})` : date;
}

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const monthName = (month) => months[month - 1];

/**
 * A metrics object of the API with the figures the dashboard shows links and organic apart
 * by: installs and opens a link brought (every match type but organic) and organic ones.
 */
export function withLinkFigures(m) {
  return {
    ...m,
    installs_from_links: m.installs - m.installs_by_match.organic,
    installs_organic: m.installs_by_match.organic,
    opens_from_links: m.opens - m.opens_by_match.organic,
    opens_organic: m.opens_by_match.organic,
  };
}

/** How long ago something was, for "updated … ago": seconds, minutes or hours, rounded. */
export function formatAge(seconds) {
  if (seconds < 1) return 'just now';
  if (seconds < 90) return `${Math.round(seconds)} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  return `${Math.round(seconds / 3600)} h ago`;
}
