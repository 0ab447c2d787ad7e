/**
 * Users (admins): create one with a root role and a password; change a user's role in place (with
 * undo); reset a user's password (every session of theirs ends); delete a user after confirming.
 * The service refuses to demote or delete the last admin who can sign in; its message is shown.
 */
import { useState } from 'preact/hooks'
import { KeyRound, Plus, Trash2, Users } from 'lucide'
import { call, get, ROLES, type User } from './api'
import { Button } from './components/button'
import { confirmFirst, Modal } from './components/dialog'
import { EmptyState } from './components/empty-state'
import { Picker, TextField } from './components/field'
import { toast } from './components/toast'
import { ErrorLine, useLoad, TableWrap } from './ui'

const ROLE_NAMES = ['Admin', 'Editor', 'Viewer']
const PASSWORD_RULE =
  '10 to 128 characters, with a lower-case letter, an upper-case letter, a digit and another character.'

const nameOf = (user: User) => user.username ?? user.email ?? user.name ?? `user ${user.id}`

function ResetPassword({ user, onClose }: { user: User | null; onClose: () => void }) {
  const [password, setPassword] = useState('')
  const [error, setError] = useState<unknown>(null)
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', `/api/admin/user-admin/${user!.id}/change-password`, { password })
      toast.success(`The password of ${nameOf(user!)} was reset; their sessions ended.`)
      setPassword('')
      setError(null)
      onClose()
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <Modal open={user !== null} title={user ? `Reset the password of ${nameOf(user)}` : ''} onClose={onClose}>
      <form class="stack" onSubmit={submit} aria-label="Reset password">
        <TextField
          label="New password for the user"
          type="password"
          autocomplete="new-password"
          required
          hint={PASSWORD_RULE}
          value={password}
          onValue={setPassword}
        />
        <p class="muted">Every session of the user ends: they sign in again with this password.</p>
        <div class="modal-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary">
            Reset password
          </Button>
        </div>
        <ErrorLine error={error} />
      </form>
    </Modal>
  )
}

export function UsersPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ users: User[] }>('/api/admin/user-admin'), [])
  const [form, setForm] = useState({ username: '', rootRole: 'Viewer', password: '' })
  const [createError, setCreateError] = useState<unknown>(null)
  const [resetting, setResetting] = useState<User | null>(null)

  const create = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', '/api/admin/user-admin', form)
      toast.success(`User ${form.username} created.`)
      setForm({ username: '', rootRole: 'Viewer', password: '' })
      setCreateError(null)
      reload()
    } catch (failure) {
      setCreateError(failure)
    }
  }

  const changeRole = async (user: User, rootRole: string, undoable = true) => {
    const before = ROLES[user.rootRole] ?? 'Viewer'
    try {
      await call('PUT', `/api/admin/user-admin/${user.id}`, { rootRole })
      reload()
      if (undoable)
        toast.success(`${nameOf(user)} is now ${rootRole}.`, {
          label: 'Undo',
          run: () => changeRole({ ...user, rootRole: ROLE_NAMES.indexOf(rootRole) + 1 }, before, false),
        })
      else toast.success(`${nameOf(user)} is ${rootRole} again.`)
    } catch (failure) {
      reload()
      toast.error(failure)
    }
  }

  const remove = async (user: User) => {
    const yes = await confirmFirst({
      title: `Delete user ${nameOf(user)}?`,
      message: 'Their sessions end and they can no longer sign in. Their name stays on the events they made.',
      confirmLabel: 'Delete user',
    })
    if (!yes) return
    try {
      await call('DELETE', `/api/admin/user-admin/${user.id}`)
      toast.success(`User ${nameOf(user)} deleted.`)
      reload()
    } catch (failure) {
      toast.error(failure)
    }
  }

  return (
    <main>
      <div class="page-head">
        <h1>Users</h1>
      </div>
      <ErrorLine error={error} />
      {canWrite && (
        <form class="inline card" aria-label="Create a user" onSubmit={create}>
          <TextField
            label="New username"
            value={form.username}
            required
            onValue={username => setForm({ ...form, username })}
          />
          <Picker
            label="Root role"
            value={form.rootRole}
            options={ROLE_NAMES}
            onChange={rootRole => setForm({ ...form, rootRole })}
          />
          <TextField
            label="New password"
            type="password"
            autocomplete="new-password"
            value={form.password}
            onValue={password => setForm({ ...form, password })}
          />
          <Button type="submit" variant="primary" icon={Plus}>
            Create user
          </Button>
          <ErrorLine error={createError} />
        </form>
      )}
      {data && data.users.length === 0 ? (
        <EmptyState icon={Users} title="No users">
          Create one above: each person signs in with their own username and password.
        </EmptyState>
      ) : (
        <TableWrap label="Users">
          <table aria-label="Users">
            <thead>
              <tr>
                <th>Username</th>
                <th class="hide-phone">Email</th>
                <th>Role</th>
                {canWrite && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {data?.users.map(user => (
                <tr key={user.id}>
                  <td>{nameOf(user)}</td>
                  <td class="hide-phone">{user.email}</td>
                  <td>
                    {canWrite ? (
                      <Picker
                        class="compact"
                        label={<span class="visually-hidden">Role of {nameOf(user)}</span>}
                        value={ROLES[user.rootRole] ?? 'Viewer'}
                        options={ROLE_NAMES}
                        onChange={role => changeRole(user, role)}
                      />
                    ) : (
                      ROLES[user.rootRole]
                    )}
                  </td>
                  {canWrite && (
                    <td>
                      <Button
                        size="sm"
                        icon={KeyRound}
                        aria-label={`Reset password of ${nameOf(user)}`}
                        onClick={() => setResetting(user)}
                      />
                      <Button
                        size="sm"
                        variant="danger"
                        icon={Trash2}
                        aria-label={`Delete ${nameOf(user)}`}
                        onClick={() => remove(user)}
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <ResetPassword user={resetting} onClose={() => setResetting(null)} />
    </main>
  )
}
