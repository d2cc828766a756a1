/**
 * Property names and coverage. A domain property covers the domain and every subdomain; a host property exactly one
 * host. Names are stored in their normal form (lower case, punycode, no port, no trailing dot); IP literals and
 * single-label names cannot be properties (nobody can prove control of them through DNS).
 */
import { ipLiteralOf } from '../crawler/address.js';
import type { PropertyKind, WebmasterProperty } from '../state/repos/webmaster-types.js';

/** Thrown for a name that cannot be a property. */
export class PropertyNameError extends Error {
  override readonly name = 'PropertyNameError';
  readonly code = 'invalid_property_name';
}

/** The normal form of a property name, or a PropertyNameError. */
export function normalizePropertyName(raw: string): string {
  const s = raw.trim();
  if (s === '' || s.length > 253 || /[\s/?#@:\\[\]]/.test(s)) throw new PropertyNameError(`"${raw}" is not a host or domain name`);
  let host: string;
  try {
    host = new URL(`http://${s}/`).hostname.replace(/\.$/, '');
  } catch {
    throw new PropertyNameError(`"${raw}" is not a host or domain name`);
  }
  if (ipLiteralOf(host) !== null) throw new PropertyNameError('an IP address cannot be a property');
  const labels = host.split('.');
  if (labels.length < 2) throw new PropertyNameError('a property needs a name with at least two labels');
  if (labels.some((l) => !/^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(l))) throw new PropertyNameError(`"${raw}" is not a host or domain name`);
  return host;
}

/** Whether a host name falls under a property. */
export function covers(property: Pick<WebmasterProperty, 'kind' | 'name'>, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (property.kind === 'host') return h === property.name;
  return h === property.name || h.endsWith(`.${property.name}`);
}

export type { PropertyKind };
