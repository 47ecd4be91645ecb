from services.web.service import run

run()
