// Apify's official JavaScript client (apify-client) against the sandbox, changing only its base
// URL: actors listed, fetched, started, aborted and called (waiting for the run), key-value store keys
// listed. Prints one JSON line per check.
//
// usage: node apify_client.mjs BASE_URL TOKEN
import { ApifyClient } from 'apify-client'

const [base, token] = process.argv.slice(2)
const check = (name, ok, detail) =>
  console.log(JSON.stringify({ check: name, ok: Boolean(ok), detail: JSON.stringify(detail ?? '').slice(0, 300) }))

try {
  const client = new ApifyClient({ token, baseUrl: `${base}/apify`, maxRetries: 0 })
  const list = await client.actors().list()
  check('apify-client actors().list()', Array.isArray(list.items), list)
  const actor = await client.actor('apistend~demo').get()
  check('apify-client actor().get()', actor && actor.id, actor)
  const started = await client.actor('apistend~demo').start({ hello: 'world' })
  check('apify-client actor().start()', started && started.id && started.status, started)
  const aborted = await client.run(started.id).abort()
  check('apify-client run().abort()', aborted && aborted.status === 'ABORTED', aborted)
  const called = await client.actor('apistend~demo').call({ hello: 'world' }, { waitSecs: 5 })
  check('apify-client actor().call() waits for the run', called && called.status === 'SUCCEEDED', called)
  const keys = await client.keyValueStore('apistend-store').listKeys()
  check('apify-client keyValueStore().listKeys()', keys && Array.isArray(keys.items), keys)
} catch (e) {
  check('apify-client unexpected error', false, String(e?.stack ?? e))
  process.exitCode = 1
}
