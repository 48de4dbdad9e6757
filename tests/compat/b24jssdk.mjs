// Bitrix24's official JavaScript SDK (@bitrix24/b24jssdk) through its webhook URL
// https://{portal}.bitrix24.ru/rest/1/{key}/, unmodified: the caller sets only the proxy and CA
// variables (HTTPS_PROXY, NODE_EXTRA_CA_CERTS). Prints one JSON line per check.
//
// usage: node b24jssdk.mjs PORTAL KEY
import { B24Hook } from '@bitrix24/b24jssdk'

const [portal, key] = process.argv.slice(2)
const check = (name, ok, detail) =>
  console.log(JSON.stringify({ check: name, ok: Boolean(ok), detail: JSON.stringify(detail ?? '').slice(0, 300) }))

try {
  const $b24 = B24Hook.fromWebhookUrl(`https://${portal}/rest/1/${key}/`)
  const me = await $b24.actions.v2.call.make({ method: 'user.current', params: {} })
  check('b24jssdk user.current', me.isSuccess && me.getData().result?.ID, me.getData())
  const batch = await $b24.actions.v2.batch.make({
    calls: [['user.current', {}], ['crm.deal.fields', {}]],
    options: { isHaltOnError: true },
  })
  const [user, fields] = batch.getData() ?? []
  check('b24jssdk batch of two commands', batch.isSuccess && user?.ID && fields?.ID, batch.getData())
  const named = await $b24.actions.v2.batch.make({
    calls: { me: ['user.current', {}], deals: ['crm.deal.list', { select: ['ID'] }] },
    options: { isHaltOnError: true },
  })
  check('b24jssdk batch with named commands', named.isSuccess && named.getData()?.me?.ID, named.getData())
} catch (e) {
  check('b24jssdk unexpected error', false, String(e?.stack ?? e))
  process.exitCode = 1
}
