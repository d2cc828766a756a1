/**
 * The attribution marker (spec §1.5): ONE static marker, identical for everyone, that a future, reviewed release
 * could append to a publisher's URL. It is INACTIVE: nothing in svc imports these constants to build a URL, and
 * nothing injects a script, pixel or conversion collection. test/webmaster/absence.test.ts asserts that no
 * response, page or stored URL carries either parameter. Activation needs a privacy, security and Canadian legal
 * review first (docs/webmaster.md, which also specifies the aggregate daily report format, in docs only).
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
