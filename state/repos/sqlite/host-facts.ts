import { type StateDb } from '../../db.js';
import { Hosts } from '../../hosts.js';
import { hostScope } from '../../site-scope.js';
import { type HostFactsRepo } from '../types.js';

/** Host facts over today's Hosts store (its statements and transactions, unchanged) and site-scope. */
export function sqliteHostFacts(db: StateDb): HostFactsRepo {
  const hosts = new Hosts(db);
  return {
    evidence: async (host: string) => ({ facts: hosts.get(host), scope: hostScope(db, host) }),
    recordRobots: async (host, f) => hosts.recordRobots(host, f),
    recordLlms: async (host, f) => hosts.recordLlms(host, f),
    recordCrawl: async (host, at) => hosts.recordCrawl(host, at),
    recordExtraction: async (host, f) => hosts.recordExtraction(host, f),
    recordChangeInterval: async (host, ms, at) => hosts.recordChangeInterval(host, ms, at),
    recordPageLinks: async (pageRef, from, counts) => hosts.recordPageLinks(pageRef, from, counts),
    withdrawPageLinks: async (pageRef) => hosts.withdrawPageLinks(pageRef),
  };
}
