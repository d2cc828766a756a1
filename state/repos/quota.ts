/**
 * Quota arithmetic shared by both backends' usage counters: fixed UTC windows (a minute, a day), the decision for
 * the counts before a request, and what a peek reports. Pure; the counting itself is each backend's.
 */
import type { RateDecision } from '../rate-limits.js';

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export function windows(now: Date): { t: number; minuteStart: number; dayStart: number } {
  const t = now.getTime();
  return { t, minuteStart: Math.floor(t / MINUTE_MS) * MINUTE_MS, dayStart: Math.floor(t / DAY_MS) * DAY_MS };
}

/** The decision given current counts (before this request); `allowed` means both counts were incremented. */
export function decide(
  limits: { perMinute: number; perDay: number },
  w: { t: number; minuteStart: number; dayStart: number },
  minute: number,
  day: number,
): RateDecision {
  const base = { limitMinute: limits.perMinute, limitDay: limits.perDay };
  if (day >= limits.perDay || minute >= limits.perMinute) {
    const waitMs = day >= limits.perDay ? w.dayStart + DAY_MS - w.t : w.minuteStart + MINUTE_MS - w.t;
    return {
      ...base,
      allowed: false,
      remainingMinute: Math.max(0, limits.perMinute - minute),
      remainingDay: Math.max(0, limits.perDay - day),
      retryAfter: Math.max(1, Math.ceil(waitMs / 1000)),
    };
  }
  return { ...base, allowed: true, remainingMinute: limits.perMinute - minute - 1, remainingDay: limits.perDay - day - 1, retryAfter: 0 };
}

/** What peek() reports for the current counts. */
export function peeked(limits: { perMinute: number; perDay: number }, minute: number, day: number): RateDecision {
  return {
    allowed: true,
    limitMinute: limits.perMinute,
    limitDay: limits.perDay,
    remainingMinute: Math.max(0, limits.perMinute - minute),
    remainingDay: Math.max(0, limits.perDay - day),
    retryAfter: 0,
  };
}
