/**
 * The attribution marker: one static marker a future, reviewed release could append to a publisher's URL. INACTIVE:
 * nothing imports these to build a URL (test/webmaster/absence.test.ts), and activation needs privacy, security and
 * legal review first (docs/webmaster.md).
 */

/** Query parameter names and their fixed values: constants, never per user, per query or per click. */
export const ATTRIBUTION_MARKER = Object.freeze({
  svc_source: 'svc',
  svc_medium: 'search',
} as const);

/** The two parameter names, for the absence scans. */
export const ATTRIBUTION_PARAMETERS = Object.freeze(Object.keys(ATTRIBUTION_MARKER)) as readonly (keyof typeof ATTRIBUTION_MARKER)[];

/** Whether the marker is applied anywhere. A constant false: flipping it is not an activation (see the module comment). */
export const ATTRIBUTION_ACTIVE = false as const;
