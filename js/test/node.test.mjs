// node's test runner, with the package's helper: a server for the file, a sandbox per test.
import { test } from 'node:test'
import { useApistend } from 'apistend/node-test'
import { exhaustedLimitIsTheLibrarys429, waitsForARequest } from './apify.mjs'

const apistend = useApistend({ args: ['--only', 'apify'] })

test('an exhausted limit is apify-client\'s own 429, counted and judged clean', async () => {
  await exhaustedLimitIsTheLibrarys429(apistend.sandbox)
})

test('a request is waited for, and the journal clears', async () => {
  await waitsForARequest(apistend.sandbox)
})
