/**
 * True when `url` names a PostgreSQL database (what selects this backend). Apart from postgres/db.ts, so choosing the
 * backend loads no PostgreSQL client.
 */
export const isPostgresUrl = (url: string | undefined): url is string => !!url && /^postgres(ql)?:\/\//i.test(url);
