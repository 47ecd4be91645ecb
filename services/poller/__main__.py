from services.poller.service import run

run()
