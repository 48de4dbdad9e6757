// What both runners check, with Apify's official JavaScript client (apify-client) changing only
// its base URL: an exhausted limit is the library's own 429, the journal counts it, and the
// conduct report finds nothing to hold against a client that stops.
import assert from 'node:assert/strict'
import { ApifyClient } from 'apify-client'

export async function exhaustedLimitIsTheLibrarys429(sandbox) {
  const apify = new ApifyClient({ token: sandbox.key, baseUrl: sandbox.baseUrl('apify'), maxRetries: 0 })
  await apify.actors().list()
  const [record] = await sandbox.requests()
  assert.equal(record.operation, 'GET /v2/actors')
  assert.notEqual(record.request.headers.authorization, `Bearer ${sandbox.key}`) // masked
  await sandbox.setLimit('apify', record.group, { burst: 2, intervalMs: 60_000 })
  await sandbox.resetBuckets()
  await sandbox.clearRequests()

  await apify.actors().list()
  await apify.actors().list()
  const refused = await apify.actors().list().then(
    () => assert.fail('the third call should be refused'),
    (e) => e,
  )
  assert.equal(refused.statusCode, 429)
  assert.equal(refused.constructor.name, 'ApifyApiError')

  const [bucket] = await sandbox.buckets({ key: sandbox.key, service: 'apify', group: record.group })
  assert.equal(bucket.remaining, 0)
  assert.equal(await sandbox.countRequests({ operation: record.operation }), 3)
  assert.equal(await sandbox.countRequests({ status: 429, refused: 'limit' }), 1)
  const report = await sandbox.conduct()
  assert.equal(report.verdict, 'clean', report.reasons.join('; '))
  assert.equal(report.keys[0].groups[0].refused, 1)
}

export async function waitsForARequest(sandbox) {
  const apify = new ApifyClient({ token: sandbox.key, baseUrl: sandbox.baseUrl('apify'), maxRetries: 0 })
  const started = Date.now()
  setTimeout(() => void apify.actor('apistend~demo').get(), 300)
  assert.equal(await sandbox.waitForRequests(1, { service: 'apify', path: '/apify/v2/actors/*' }), 1)
  assert.ok(Date.now() - started >= 250)
  await sandbox.clearRequests()
  await assert.rejects(sandbox.waitForRequests(1, {}, 200), /0 of 1 requests/)
}
