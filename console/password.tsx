import { useState } from 'preact/hooks'
import { call } from './api'
import { ErrorLine } from './ui'

/** A signed-in user's own password. Every session ends with the change, so the user signs in again. */
export function PasswordPage({ onChanged }: { onChanged: () => void }) {
  const [oldPassword, setOldPassword] = useState('')
  const [password, setPassword] = useState('')
  const [confirmPassword, setConfirmPassword] = useState('')
  const [error, setError] = useState<unknown>(null)
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', '/api/admin/user/change-password', { oldPassword, password, confirmPassword })
      onChanged()
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <main class="sign-in">
      <h1>Change your password</h1>
      <form onSubmit={submit}>
        <label>
          Current password
          <input
            type="password"
            autocomplete="current-password"
            required
            value={oldPassword}
            onInput={e => setOldPassword(e.currentTarget.value)}
          />
        </label>
        <label>
          New password
          <input
            type="password"
            autocomplete="new-password"
            required
            aria-describedby="password-rule"
            value={password}
            onInput={e => setPassword(e.currentTarget.value)}
          />
        </label>
        <p id="password-rule" class="muted">
          10 to 128 characters, with a lower-case letter, an upper-case letter, a digit and another character.
        </p>
        <label>
          Confirm new password
          <input
            type="password"
            autocomplete="new-password"
            required
            value={confirmPassword}
            onInput={e => setConfirmPassword(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="btn btn-primary">
          Change password
        </button>
        <ErrorLine error={error} />
      </form>
    </main>
  )
}
