import { expect } from 'chai';
import { call, expectRateLimitHeaders, type Answer } from '../../../../tools/test-support/http.js';

/**
 * Every page of a list from `url` to the last, following `Link: <…>; rel="next"` (RFC
 * 8288, docs/CONTRACT.md "Discovery"): each answer must be 200 with the rate-limit
 * headers, each next URL on the same path as `url` (the list's own address, its query
 * kept), and the list must end within `maxPages`.
 *
 * @param url - the first page's absolute URL.
 * @param each - more checks of each page's answer (e.g. `next_cursor` agreeing with `Link`).
 * @returns every page's answer, in order.
 */
export async function everyPage(url: string, headers: Record<string, string>, each: (answer: Answer) => void = () => undefined, maxPages = 50): Promise<Answer[]> {
  const path = url.split('?')[0] ?? url;
  const answers: Answer[] = [];
  let next: string | null = url;
  while (next !== null) {
    expect(answers.length, `${url}: fewer than ${maxPages} pages`).to.be.below(maxPages);
    const answer = await call('', 'GET', next, { headers });
    expect(answer.status, answer.text).to.equal(200);
    expectRateLimitHeaders(answer, true);
    each(answer);
    answers.push(answer);
    const link = answer.headers.get('link');
    next = link === null ? null : (/<([^>]+)>; rel="next"/u.exec(link)?.[1] ?? 'malformed Link');
    if (next !== null) expect(next.startsWith(`${path}?`), next).to.equal(true);
  }
  return answers;
}
