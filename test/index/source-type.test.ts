import t from 'tap';
import { classifySource, provinceFromRegion } from '../../index/retrieval/source-type.js';

const none = { declaredTypes: [], addressCountries: [], addressRegions: [] };

t.test('government levels from host suffixes', async (t) => {
  t.same(classifySource('www.canada.ca', none), { country: 'ca', province: null, sourceType: 'government:federal' });
  t.same(classifySource('www.cra-arc.gc.ca', none), { country: 'ca', province: null, sourceType: 'government:federal' });
  t.same(classifySource('www.ontario.ca', none), { country: 'ca', province: 'on', sourceType: 'government:provincial' });
  t.same(classifySource('www.health.gov.on.ca', none), { country: 'ca', province: 'on', sourceType: 'government:provincial' });
  t.same(classifySource('www.quebec.ca', none), { country: 'ca', province: 'qc', sourceType: 'government:provincial' });
  t.same(classifySource('www.mrc.gouv.qc.ca', none), { country: 'ca', province: 'qc', sourceType: 'government:provincial' });
  t.same(classifySource('www2.gov.bc.ca', none), { country: 'ca', province: 'bc', sourceType: 'government:provincial' });
  t.same(classifySource('ottawa.ca', none), { country: 'ca', province: 'on', sourceType: 'government:municipal' });
  t.same(classifySource('www.ville.quebec.qc.ca', none), { country: 'ca', province: 'qc', sourceType: 'government:municipal' });
  t.same(classifySource('www.city.example.on.ca', none), { country: 'ca', province: 'on', sourceType: 'government:municipal' });
  t.same(classifySource('www.usa.gov', none), { country: 'us', province: null, sourceType: 'government:federal' });
});

t.test('other kinds from hosts and declared JSON-LD types', async (t) => {
  t.equal(classifySource('www.utoronto.ca', none).sourceType, 'education');
  t.equal(classifySource('example.edu', none).sourceType, 'education');
  t.equal(classifySource('x.example', { ...none, declaredTypes: ['CollegeOrUniversity'] }).sourceType, 'education');
  t.equal(classifySource('x.example', { ...none, declaredTypes: ['Hospital'] }).sourceType, 'health');
  t.equal(classifySource('www.cbc.ca', none).sourceType, 'news');
  t.equal(classifySource('x.example', { ...none, declaredTypes: ['NewsMediaOrganization'] }).sourceType, 'news');
  t.equal(classifySource('x.example', { ...none, declaredTypes: ['GovernmentOrganization'] }).sourceType, 'government:other');
  t.equal(classifySource('redcross.org', none).sourceType, 'organization');
  t.equal(classifySource('shop.example.com', none).sourceType, 'other');
});

t.test('country and province from declared addresses', async (t) => {
  const s = classifySource('bakery.example.com', { declaredTypes: ['Bakery'], addressCountries: ['CA'], addressRegions: ['Québec'] });
  t.same(s, { country: 'ca', province: 'qc', sourceType: 'organization' });
  t.equal(provinceFromRegion('ON'), 'on');
  t.equal(provinceFromRegion('Colombie-Britannique'), 'bc');
  t.equal(provinceFromRegion('CA-NS'), 'ns');
  t.equal(provinceFromRegion('Bavaria'), null);
  t.equal(classifySource('shop.example.io', none).country, null, 'generic two-letter TLDs say nothing about a country');
  t.equal(classifySource('www.example.fr', none).country, 'fr');
});

t.test('declared types count through the schema.org hierarchy (issue 4)', async (t) => {
  const none = { addressCountries: [], addressRegions: [] };
  t.equal(classifySource('boulangerie-example.ca', { declaredTypes: ['Bakery'], ...none }).sourceType, 'organization');
  t.equal(classifySource('smile-example.ca', { declaredTypes: ['Dentist'], ...none }).sourceType, 'health');
  t.equal(classifySource('lakeshore-example.ca', { declaredTypes: ['HighSchool'], ...none }).sourceType, 'education');
  t.equal(
    classifySource('agency-example.ca', { declaredTypes: ['https://schema.org/GovernmentOrganization'], ...none }).sourceType,
    'government:other',
  );
  t.equal(classifySource('blog-example.ca', { declaredTypes: ['BlogPosting'], ...none }).sourceType, 'other');
});
